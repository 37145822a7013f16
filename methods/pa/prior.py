"""Mixture Gaussian (spike-and-slab) prior on every network weight (paper section 4 and its
appendix "Mixture Gaussian Prior").

    pi(b) = lam N(b; 0, s1) + (1 - lam) N(b; 0, s0),   0 < s0 < s1 (variances; s0 is the spike)

With c1 = log lam - log(1 - lam) + 0.5 log s0 - 0.5 log s1 and c2 = 1/(2 s0) - 1/(2 s1),
the posterior probability that b came from the spike is

    p_spike(b) = 1 / (1 + exp(c1 + c2 b^2)) = sigmoid(-(c1 + c2 b^2)),

and d log pi / db = -b/s0 p_spike(b) - b/s1 (1 - p_spike(b)).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

_LOG_2PI = math.log(2.0 * math.pi)


Scalar = float | torch.Tensor  # a Python number, or a 0-dim tensor (what a CUDA graph reads at replay)


def _spike_probability(b: torch.Tensor, c1: Scalar, c2: Scalar) -> torch.Tensor:
    return torch.sigmoid(-(c1 + c2 * b * b))


def mixture_grad_log_density(b: torch.Tensor, c1: Scalar, c2: Scalar, s0: Scalar, s1: Scalar) -> torch.Tensor:
    """d log pi / db = -b/s0 p_spike - b/s1 (1 - p_spike), p_spike = sigmoid(-(c1 + c2 b^2)), elementwise
    (the constants of :class:`MixtureGaussianPrior`, as numbers or 0-dim tensors)."""
    p_spike = _spike_probability(b, c1, c2)
    return -b / s0 * p_spike - b / s1 * (1.0 - p_spike)


@dataclass(frozen=True)
class MixtureGaussianPrior:
    """pi(b) = lam N(0, s1) + (1 - lam) N(0, s0), applied independently to every weight."""

    lam: float
    s0: float
    s1: float

    def __post_init__(self) -> None:
        for name in ("lam", "s0", "s1"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
        if not 0.0 < self.lam < 1.0:
            raise ValueError(f"lam must satisfy 0 < lam < 1, got {self.lam}")
        if not 0.0 < self.s0 < self.s1:
            raise ValueError(f"variances must satisfy 0 < s0 < s1, got s0={self.s0}, s1={self.s1}")

    # constants of the spike posterior -----------------------------------------------------
    @property
    def c1(self) -> float:
        """log lam - log(1 - lam) + 0.5 log s0 - 0.5 log s1."""
        return math.log(self.lam) - math.log1p(-self.lam) + 0.5 * math.log(self.s0) - 0.5 * math.log(self.s1)

    @property
    def c2(self) -> float:
        """1/(2 s0) - 1/(2 s1) (> 0)."""
        return 0.5 / self.s0 - 0.5 / self.s1

    # density --------------------------------------------------------------------------------
    def log_density(self, b: torch.Tensor) -> torch.Tensor:
        """sum_i log pi(b_i), via logsumexp of the slab and spike log terms (no underflow)."""
        sq = b * b
        log_slab = math.log(self.lam) - 0.5 * (_LOG_2PI + math.log(self.s1)) - sq / (2.0 * self.s1)
        log_spike = math.log1p(-self.lam) - 0.5 * (_LOG_2PI + math.log(self.s0)) - sq / (2.0 * self.s0)
        return torch.logaddexp(log_slab, log_spike).sum()

    def spike_probability(self, b: torch.Tensor) -> torch.Tensor:
        """p_spike(b) = sigmoid(-(c1 + c2 b^2)), elementwise."""
        return _spike_probability(b, self.c1, self.c2)

    def inclusion_probability(self, b: torch.Tensor) -> torch.Tensor:
        """1 - p_spike(b) = sigmoid(c1 + c2 b^2): posterior probability of the slab, elementwise."""
        return torch.sigmoid(self.c1 + self.c2 * b * b)

    def grad_log_density(self, b: torch.Tensor) -> torch.Tensor:
        """d log pi / db = -b/s0 p_spike - b/s1 (1 - p_spike), elementwise."""
        return mixture_grad_log_density(b, self.c1, self.c2, self.s0, self.s1)

    def curvature(self, b: torch.Tensor) -> torch.Tensor:
        """kappa(b) = p_spike/s0 + (1 - p_spike)/s1 >= 0, so that d log pi / db = -kappa(b) b."""
        p_spike = self.spike_probability(b)
        return p_spike / self.s0 + (1.0 - p_spike) / self.s1

    def threshold(self) -> float:
        """|b| at which the inclusion probability is 0.5:

            sqrt( log((1 - lam)/lam sqrt(s1/s0)) / (1/(2 s0) - 1/(2 s1)) ).

        If the log is <= 0 (inclusion >= 0.5 everywhere) the threshold is 0.0.
        """
        log_ratio = -self.c1  # = log((1 - lam)/lam * sqrt(s1/s0))
        if log_ratio <= 0.0:
            return 0.0
        return math.sqrt(log_ratio / self.c2)

    def with_s0(self, s0: float) -> MixtureGaussianPrior:
        """Copy with a new spike variance (used by the s0 annealing)."""
        return dataclasses.replace(self, s0=s0)
