"""What every set method on the sequence network shares: parameters, scaling, seeding, training, prediction.

Inputs are standardised per time position with the statistics of the sequences
the network trains on (docs/guide/datasets.md); targets stay in raw units unless
``standardize_target`` (then the network fits standardised targets and its
outputs are mapped back, an affine map per horizon). A subclass says what it
trains on, with which loss and how many outputs per step, and how it turns the
network into intervals.
"""

from __future__ import annotations

import hashlib
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from pibench.data_loaders.problems import SetData
from pibench.methods.base import IntervalMethod
from pibench.methods.forecasters.scaling import Standardizer
from pibench.methods.param_checks import non_negative_int, positive, positive_int
from pibench.methods.sequence.losses import mse_loss
from pibench.methods.sequence.network import SequenceNet
from pibench.methods.sequence.stacked import StackedSequenceNets
from pibench.methods.sequence.train import train_network, train_stack


class SequenceMethod(IntervalMethod):
    """Shared skeleton of the set methods (CF-RNN, MQ-RNN, DP-RNN, PA-LSTM)."""

    shape = "set"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, hidden: int = 20, epochs: int = 100,
                 lr: float = 0.01, batch_size: int = 150, standardize_target: bool = False,
                 steps_per_epoch: int = 0):
        super().__init__(alpha=alpha, random_state=random_state)
        self.hidden, self.epochs, self.lr, self.batch_size = hidden, epochs, lr, batch_size
        self.standardize_target = standardize_target
        self.steps_per_epoch = steps_per_epoch  # 0: an epoch is one pass; k: k random minibatches (train.py)

    def _check_param_values(self) -> None:
        super()._check_param_values()
        for key in ("hidden", "epochs", "batch_size"):
            positive_int(key, getattr(self, key))
        non_negative_int("steps_per_epoch", self.steps_per_epoch)
        positive("lr", self.lr)

    def _seed(self) -> int:
        """The task's seed for torch (initial weights, minibatch order, dropout masks)."""
        return int(np.random.SeedSequence([int(self.random_state)]).generate_state(1)[0])

    def _scale(self, data: SetData) -> tuple[torch.Tensor, torch.Tensor]:
        """Fit the scalers on ``data``; return its scaled inputs and (scaled) targets as float32 tensors."""
        self.x_scaler_ = Standardizer().fit(data.x)
        self.y_scaler_ = Standardizer(enabled=self.standardize_target).fit(data.y)
        return self._inputs(data.x), torch.as_tensor(self.y_scaler_.transform(data.y), dtype=torch.float32)

    def _inputs(self, x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(self.x_scaler_.transform(np.asarray(x, dtype=float)), dtype=torch.float32)

    def _new_network(self, data: SetData, outputs_per_step: int = 1, dropout: float = 0.0) -> SequenceNet:
        torch.manual_seed(self._seed())
        return SequenceNet(data.x.shape[2], self.hidden, data.horizon, outputs_per_step, dropout)

    def _train(self, data: SetData, outputs_per_step: int = 1, dropout: float = 0.0, loss_fn=mse_loss) -> SequenceNet:
        """A network trained on ``data`` (scalers fitted on it), in eval mode: the one :meth:`fit_together`
        left for this data if it did, else trained here."""
        x, y = self._scale(data)
        from_cell = self._take_from_cell(set_fingerprint(data))
        self.trained_in_cell_ = from_cell is not None
        if from_cell is not None:
            net, self.loss_history_ = from_cell
            return net.eval()
        net = self._new_network(data, outputs_per_step, dropout)
        self.loss_history_ = train_network(net, x, y, loss_fn, epochs=self.epochs, lr=self.lr,
                                           batch_size=self.batch_size, seed=self._seed(),
                                           steps_per_epoch=self.steps_per_epoch)
        return net.eval()

    def _to_raw(self, out: np.ndarray) -> np.ndarray:
        """Network outputs (m, H) or (m, H, k) in target units."""
        mean, std = np.asarray(self.y_scaler_.mean_), np.asarray(self.y_scaler_.std_)
        if out.ndim == 3:
            mean, std = mean[..., None], std[..., None]
        return out * std + mean

    def _outputs(self, net: SequenceNet, x: np.ndarray) -> np.ndarray:
        """The network's outputs for x, in target units (dropout as the network's mode says)."""
        with torch.no_grad():
            return self._to_raw(net(self._inputs(x)).double().numpy())

    def diagnostics(self) -> dict:
        history = getattr(self, "loss_history_", None)
        return ({"final_train_loss": float(history[-1])} if history else {}) \
            | ({"trained_in_cell": True} if getattr(self, "trained_in_cell_", False) else {})


@dataclass(frozen=True)
class TrainingPlan:
    """What a set method's network trains on and how: :meth:`TrainsTogether._training_plan`'s answer."""

    data: SetData
    outputs_per_step: int = 1
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = mse_loss
    dropout: float = 0.0


class TrainsTogether(SequenceMethod):
    """A set method whose fits of one problem, differing only in their seed, can train as one network
    (:class:`~pibench.methods.sequence.stacked.StackedSequenceNets`): on a GPU the runner trains a cell of
    seeds so (``batch_cells``); each member keeps its seed's initial weights, minibatches and dropout
    masks. A subclass says what it trains on (:meth:`_training_plan`) and fits with
    ``self._train(**vars(self._training_plan(train, calibration)))``."""

    #: left by :meth:`fit_together` for the next fit: (the training data's fingerprint, network, loss history)
    trained_together_: tuple[str, SequenceNet, list[float]]

    @abstractmethod
    def _training_plan(self, train: SetData, calibration: SetData | None) -> TrainingPlan:
        """What this method's network trains on (train, or train and calibration) and with which loss."""

    @classmethod
    def fit_together(cls, methods: list[TrainsTogether], datas: list[tuple[SetData, SetData | None]]) -> None:
        """Train the networks of ``methods[b].fit(*datas[b])`` as one stack; each fit then takes its member.
        The methods must share every parameter but the seed, and their training sets their size."""
        cls._check_cell(methods)
        plans = [m._training_plan(train, calibration) for m, (train, calibration) in zip(methods, datas)]
        scaled = [m._scale(plan.data) for m, plan in zip(methods, plans)]
        first, plan = methods[0], plans[0]
        nets, streams = [], []
        for m, p in zip(methods, plans):  # each member's dropout stream: the generator's state after its network
            nets.append(m._new_network(p.data, p.outputs_per_step, p.dropout))
            streams.append(torch.random.get_rng_state())
        stack = StackedSequenceNets(nets)
        seeds = [m._seed() for m in methods]
        stack.draw_dropout_from(streams, seeds)
        histories = train_stack(stack, [x for x, _ in scaled], [y for _, y in scaled], plan.loss_fn,
                                epochs=first.epochs, lr=first.lr, batch_size=first.batch_size,
                                seeds=seeds, steps_per_epoch=first.steps_per_epoch)
        for b, (m, p) in enumerate(zip(methods, plans)):
            m.trained_together_ = (set_fingerprint(p.data), stack.member(b), histories[b])


def set_fingerprint(data: SetData) -> str:
    """Which data a network trained together was trained on (a fit takes it only for the same data)."""
    digest = hashlib.sha256()
    for array in (data.x, data.y):
        a = np.ascontiguousarray(array, dtype=float)
        digest.update(str(a.shape).encode() + a.tobytes())
    return digest.hexdigest()
