"""One-hidden-layer MLPs for many independent problems, trained as one batched network.

The paper's base forecaster (docs/guide/methods.md; paper appendix on fesp): a hidden
layer of 100 sigmoid units, SGD with momentum 0.9, minibatches of 100, MSE loss,
features standardised on the training window. Model m has its own
initialisation seed and minibatch order, and every operation acts on one model's
slice of the stacked tensors, so training M models together equals training
each alone with the same seed (`tests/test_mlp.py`).

Speed: the forward and backward passes are written out by hand (two batched
GEMMs per step, no autograd graph) into preallocated buffers, and models are
trained in blocks small enough for their activations to stay in cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from pibench.methods.device import current_device
from pibench.methods.forecasters.scaling import Standardizer

ACTIVATIONS = ("sigmoid", "tanh")


@dataclass
class MLPWeights:
    """Stacked weights of M models: w1 (M, p, h), b1 (M, 1, h), w2 (M, h), b2 (M, 1)."""

    w1: torch.Tensor
    b1: torch.Tensor
    w2: torch.Tensor
    b2: torch.Tensor
    activation: str = "sigmoid"

    def predict(self, X: np.ndarray | torch.Tensor) -> np.ndarray:
        """X (M, m, p) -> (M, m)."""
        X = torch.as_tensor(X, dtype=torch.float32)
        with torch.no_grad():
            H = _activate(torch.baddbmm(self.b1, X, self.w1), self.activation)
            return (H * self.w2[:, None, :]).sum(-1).add_(self.b2).numpy().astype(float)

    def to(self, device: torch.device) -> MLPWeights:
        """These weights on ``device`` (tensors already there are shared, not copied)."""
        return MLPWeights(self.w1.to(device), self.b1.to(device), self.w2.to(device), self.b2.to(device),
                          activation=self.activation)

    @staticmethod
    def concat(parts: Sequence[MLPWeights]) -> MLPWeights:
        return MLPWeights(torch.cat([p.w1 for p in parts]), torch.cat([p.b1 for p in parts]),
                          torch.cat([p.w2 for p in parts]), torch.cat([p.b2 for p in parts]),
                          activation=parts[0].activation)


def _activate(A: torch.Tensor, activation: str) -> torch.Tensor:
    return A.sigmoid_() if activation == "sigmoid" else A.tanh_()


def init_weights(n_features: int, hidden: int, seeds: Sequence[int], activation: str) -> MLPWeights:
    """torch.nn.Linear's initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), from each model's seed."""
    parts: dict[str, list[torch.Tensor]] = {"w1": [], "b1": [], "w2": [], "b2": []}
    k1, k2 = 1 / np.sqrt(n_features), 1 / np.sqrt(hidden)
    for seed in seeds:
        g = torch.Generator().manual_seed(int(seed))
        for name, shape, bound in (("w1", (n_features, hidden), k1), ("b1", (1, hidden), k1),
                                   ("w2", (hidden,), k2), ("b2", (1,), k2)):
            parts[name].append((torch.rand(shape, generator=g) * 2 - 1) * bound)
    return MLPWeights(torch.stack(parts["w1"]), torch.stack(parts["b1"]), torch.stack(parts["w2"]),
                      torch.stack(parts["b2"]), activation=activation)


def minibatch_orders(n: int, epochs: int, seed: int) -> np.ndarray:
    """(epochs, n) sample orders of one model: a fresh permutation per epoch."""
    return np.random.default_rng(seed).permuted(np.tile(np.arange(n), (epochs, 1)), axis=1)


def _train_block(X: torch.Tensor, y: torch.Tensor, weights: MLPWeights, orders: torch.Tensor,
                 lr: float, momentum: float, batch_size: int) -> None:
    """SGD with momentum (torch.optim.SGD's rule: buf = m buf + g; w -= lr buf), in place."""
    M, n, p = X.shape
    h = weights.w1.shape[2]
    params = (weights.w1, weights.b1, weights.w2, weights.b2)
    bufs = [torch.zeros_like(q) for q in params]
    offsets = (torch.arange(M, device=X.device) * n)[:, None]
    X_flat, y_flat = X.reshape(M * n, p), y.reshape(M * n)
    buffers: dict[int, tuple[torch.Tensor, ...]] = {}
    for epoch_order in orders:  # (M, n)
        for start in range(0, n, batch_size):
            nb = min(batch_size, n - start)
            if nb not in buffers:
                shapes = ((M, nb, p), (M, nb, h), (M, nb, h), (M, nb, h), (M, p, h))
                buffers[nb] = tuple(torch.empty(shape, device=X.device) for shape in shapes)
            Xb, H, dA, tmp, gw1 = buffers[nb]
            rows = (epoch_order[:, start : start + nb] + offsets).reshape(-1)
            torch.index_select(X_flat, 0, rows, out=Xb.view(M * nb, p))
            yb = y_flat.index_select(0, rows).view(M, nb)
            # forward: H = act(X W1 + b1), out = H w2 + b2
            _activate(torch.bmm(Xb, weights.w1, out=H).add_(weights.b1), weights.activation)
            out = torch.mul(H, weights.w2[:, None, :], out=tmp).sum(-1).add_(weights.b2)
            # backward of each model's mean squared error
            r = out.sub_(yb).mul_(2.0 / nb)  # dL/dout (M, nb)
            g_w2 = torch.bmm(r[:, None, :], H).squeeze(1)
            g_b2 = r.sum(1, keepdim=True)
            torch.mul(r[:, :, None], weights.w2[:, None, :], out=dA)  # dL/dH
            torch.mul(H, H, out=tmp)
            if weights.activation == "sigmoid":
                torch.sub(H, tmp, out=tmp)  # sigmoid' = H - H^2
            else:
                tmp.neg_().add_(1.0)  # tanh' = 1 - H^2
            dA.mul_(tmp)
            torch.bmm(Xb.transpose(1, 2), dA, out=gw1)
            g_b1 = dA.sum(1, keepdim=True)
            for q, buf, grad in zip(params, bufs, (gw1, g_b1, g_w2, g_b2)):
                buf.mul_(momentum).add_(grad)
                q.sub_(buf, alpha=lr)


def train_batched_mlp(
    X: np.ndarray,
    y: np.ndarray,
    *,
    seeds: Sequence[int],
    hidden: int = 100,
    epochs: int = 300,
    lr: float = 1e-3,
    momentum: float = 0.9,
    batch_size: int = 100,
    activation: str = "sigmoid",
    block_size: int | None = None,
) -> MLPWeights:
    """Train M MLPs on X (M, n, p), y (M, n) with minibatch SGD + momentum on the MSE.

    Training runs on :func:`~pibench.methods.device.current_device`; initial weights and minibatch
    orders are drawn on the CPU and moved there, and the weights come back to the CPU.
    ``block_size``: models trained together (default: 16 on the CPU, where their activations
    then stay in cache; all M on a GPU). Models are independent, so it changes
    nothing but rounding (torch's CPU sigmoid may round a tensor of another size differently).
    """
    M, n, p = X.shape
    if len(seeds) != M:
        raise ValueError(f"need one seed per model: {len(seeds)} seeds for {M} models.")
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation={activation!r}; choose one of {ACTIVATIONS}.")
    device = current_device()
    block_size = block_size or (16 if device.type == "cpu" else M)
    Xt = torch.as_tensor(np.asarray(X, dtype=np.float32)).to(device)
    yt = torch.as_tensor(np.asarray(y, dtype=np.float32)).to(device)
    parts = []
    for lo in range(0, M, block_size):
        block_seeds = [int(s) for s in seeds[lo : lo + block_size]]
        weights = init_weights(p, hidden, block_seeds, activation).to(device)
        orders = torch.as_tensor(np.stack([minibatch_orders(n, epochs, s) for s in block_seeds], axis=1)).to(device)
        _train_block(Xt[lo : lo + block_size].contiguous(), yt[lo : lo + block_size].contiguous(),
                     weights, orders, lr, momentum, batch_size)
        parts.append(weights.to(torch.device("cpu")))
    return MLPWeights.concat(parts)


class MLPForecaster:
    """Base forecaster for F windows x G groups at once: one MLP per (window, group).

    Each model standardises its inputs (and, by default, its target) with its own
    window's statistics, as the paper refits the scaler with the model.
    """

    def __init__(self, hidden: int = 100, epochs: int = 300, lr: float = 1e-3, momentum: float = 0.9,
                 batch_size: int = 100, activation: str = "sigmoid", standardize_target: bool = True):
        self.hidden, self.epochs, self.lr, self.momentum = hidden, epochs, lr, momentum
        self.batch_size, self.activation, self.standardize_target = batch_size, activation, standardize_target

    def fit(self, X: np.ndarray, y: np.ndarray, seeds: np.ndarray) -> MLPForecaster:
        """X (F, n, G, p), y (F, n, G), seeds (F, G)."""
        F, n, G, p = X.shape
        self.x_scaler_ = Standardizer().fit(np.moveaxis(X, 1, 0))  # statistics (F, G, p)
        self.y_scaler_ = Standardizer(enabled=self.standardize_target).fit(np.moveaxis(y, 1, 0))
        Xs = np.moveaxis(self.x_scaler_.transform(np.moveaxis(X, 1, 0)), 0, 2).reshape(F * G, n, p)
        ys = np.moveaxis(self.y_scaler_.transform(np.moveaxis(y, 1, 0)), 0, 2).reshape(F * G, n)
        self.weights_ = train_batched_mlp(
            Xs, ys, seeds=np.asarray(seeds).reshape(-1).tolist(), hidden=self.hidden, epochs=self.epochs,
            lr=self.lr, momentum=self.momentum, batch_size=self.batch_size, activation=self.activation,
        )
        self.shape_ = (F, G)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        """X (F, m, G, p) -> point forecasts (F, m, G)."""
        F, m, G, p = X.shape
        Xs = np.moveaxis(self.x_scaler_.transform(np.moveaxis(X, 1, 0)), 0, 2).reshape(F * G, m, p)
        out = np.moveaxis(self.weights_.predict(Xs).reshape(F, G, m), 2, 0)  # (m, F, G)
        return np.moveaxis(self.y_scaler_.inverse_transform(out), 0, 1)
