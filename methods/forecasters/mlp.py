"""One-hidden-layer MLPs for G independent problems, trained as one batched network.

The paper's base forecaster (SPEC §3.2-3.5, paper appendix "fesp"): hidden layer
of 100, sigmoid, SGD with momentum, minibatches of 100, features standardised on
the training window. Model g has its own initialisation seed and its own
minibatch order, and the loss is the sum over models of each model's mean
squared error, so the gradients never mix: training the stack equals training
each model alone with the same seed (`tests/test_mlp.py` checks this).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from methods.forecasters.scaling import Standardizer

ACTIVATIONS = {"sigmoid": torch.sigmoid, "tanh": torch.tanh, "relu": torch.relu}


def _uniform(shape: tuple[int, ...], bound: float, generator: torch.Generator) -> torch.Tensor:
    return (torch.rand(shape, generator=generator, dtype=torch.float32) * 2 - 1) * bound


class BatchedMLP(torch.nn.Module):
    """G one-hidden-layer MLPs: x (G, n, p) -> (G, n).

    Initialisation as torch.nn.Linear: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for
    weights and biases, drawn for model g from its own generator seeded seeds[g].
    """

    def __init__(self, n_features: int, hidden: int, seeds: Sequence[int], activation: str = "sigmoid"):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation={activation!r}; choose one of {sorted(ACTIVATIONS)}.")
        self.activation = activation
        w1, b1, w2, b2 = [], [], [], []
        for seed in seeds:
            g = torch.Generator().manual_seed(int(seed))
            k1, k2 = 1 / np.sqrt(n_features), 1 / np.sqrt(hidden)
            w1.append(_uniform((n_features, hidden), k1, g))
            b1.append(_uniform((1, hidden), k1, g))
            w2.append(_uniform((hidden, 1), k2, g))
            b2.append(_uniform((1, 1), k2, g))
        self.w1 = torch.nn.Parameter(torch.stack(w1))
        self.b1 = torch.nn.Parameter(torch.stack(b1))
        self.w2 = torch.nn.Parameter(torch.stack(w2))
        self.b2 = torch.nn.Parameter(torch.stack(b2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = ACTIVATIONS[self.activation](torch.baddbmm(self.b1, x, self.w1))
        return torch.baddbmm(self.b2, h, self.w2).squeeze(-1)


def minibatch_orders(n: int, batch_size: int, epochs: int, seeds: Sequence[int]) -> list[np.ndarray]:
    """Per model, a (epochs, n) array of sample orders (one permutation per epoch)."""
    return [np.random.default_rng(seed).permuted(np.tile(np.arange(n), (epochs, 1)), axis=1) for seed in seeds]


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
) -> BatchedMLP:
    """Train G MLPs on X (G, n, p), y (G, n) with SGD + momentum on the MSE."""
    G, n, p = X.shape
    if len(seeds) != G:
        raise ValueError(f"need one seed per model: {len(seeds)} seeds for {G} models.")
    model = BatchedMLP(p, hidden, seeds, activation)
    Xt = torch.as_tensor(X, dtype=torch.float32)
    yt = torch.as_tensor(y, dtype=torch.float32)
    orders = torch.as_tensor(np.stack(minibatch_orders(n, batch_size, epochs, seeds), axis=1))  # (epochs, G, n)
    rows = torch.arange(G)[:, None]
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    for epoch in range(epochs):
        order = orders[epoch]
        for start in range(0, n, batch_size):
            idx = order[:, start : start + batch_size]
            pred = model(Xt[rows, idx])
            # sum over models of each model's mean loss: gradients stay per model
            loss = ((pred - yt[rows, idx]) ** 2).mean(dim=1).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    return model


class MLPForecaster:
    """Per-group point forecaster: standardise, train the batched MLP, predict."""

    def __init__(
        self,
        hidden: int = 100,
        epochs: int = 300,
        lr: float = 1e-3,
        momentum: float = 0.9,
        batch_size: int = 100,
        activation: str = "sigmoid",
        standardize_target: bool = True,
    ):
        self.hidden, self.epochs, self.lr, self.momentum = hidden, epochs, lr, momentum
        self.batch_size, self.activation, self.standardize_target = batch_size, activation, standardize_target

    def fit(self, X: np.ndarray, y: np.ndarray, seeds: Sequence[int]) -> MLPForecaster:
        """X (n, G, p), y (n, G); one seed per group."""
        self.x_scaler_ = Standardizer().fit(X)
        self.y_scaler_ = Standardizer(enabled=self.standardize_target).fit(y)
        Xs = np.moveaxis(self.x_scaler_.transform(X), 1, 0)
        ys = self.y_scaler_.transform(y).T
        self.model_ = train_batched_mlp(
            Xs, ys, seeds=seeds, hidden=self.hidden, epochs=self.epochs, lr=self.lr,
            momentum=self.momentum, batch_size=self.batch_size, activation=self.activation,
        )
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        """X (m, G, p) -> point forecasts (m, G)."""
        Xs = torch.as_tensor(np.moveaxis(self.x_scaler_.transform(X), 1, 0), dtype=torch.float32)
        with torch.no_grad():
            out = self.model_(Xs).numpy().astype(float).T
        return self.y_scaler_.inverse_transform(out)
