"""Prior-annealing schedule of PA (paper section 4); t counts epochs or iterations.

    phase        | t range        | eta_t (prior weight)  | s0_t                          | temperature
    initial      | t < T1         | 0                     | s0_init                       | 0 (plain SGD)
    anneal_prior | T1 <= t < T2   | (t - T1)/(T2 - T1)    | s0_init                       | tau
    anneal_s0    | T2 <= t < T3   | 1                     | s0_init + (s0_end - s0_init)  | tau
                 |                |                       |   (t - T2)/(T3 - T2)          |
    cool         | t >= T3        | 1                     | s0_end                        | tau/(t - T3), tau at t = T3

Degenerate phases are simply empty: with T1 == T2 the prior weight jumps from 0 to 1 at
t = T1 (no division by zero); with T2 == T3 s0 jumps from s0_init to s0_end at t = T2.
In the cooling phase tau_t = tau / max(t - T3, 1), i.e. tau at t = T3 and tau/(t - T3)
for every integer t > T3 (also bounded by tau for fractional t in (T3, T3 + 1)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PHASES = ("initial", "anneal_prior", "anneal_s0", "cool")


@dataclass(frozen=True)
class AnnealingSchedule:
    """Prior weight, spike variance and SGHMC temperature as functions of t (see module doc)."""

    T1: float
    T2: float
    T3: float
    s0_init: float
    s0_end: float
    tau: float = 1.0

    def __post_init__(self) -> None:
        for name in ("T1", "T2", "T3", "s0_init", "s0_end", "tau"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
        if not 0 <= self.T1 <= self.T2 <= self.T3:
            raise ValueError(f"need 0 <= T1 <= T2 <= T3, got T1={self.T1}, T2={self.T2}, T3={self.T3}")
        if not (self.s0_init > 0 and self.s0_end > 0):
            raise ValueError(f"s0_init and s0_end must be > 0, got {self.s0_init}, {self.s0_end}")
        if self.s0_end > self.s0_init:
            raise ValueError(f"need s0_end <= s0_init, got s0_end={self.s0_end} > s0_init={self.s0_init}")
        if self.tau < 0:
            raise ValueError(f"tau must be >= 0, got {self.tau}")

    def phase(self, t: float) -> str:
        """'initial' (t < T1), 'anneal_prior' (< T2), 'anneal_s0' (< T3) or 'cool'."""
        if t < self.T1:
            return "initial"
        if t < self.T2:
            return "anneal_prior"
        if t < self.T3:
            return "anneal_s0"
        return "cool"

    def prior_weight(self, t: float) -> float:
        """eta_t: 0 before T1, (t - T1)/(T2 - T1) on [T1, T2), 1 from T2 on."""
        if t < self.T1:
            return 0.0
        if t < self.T2:  # implies T2 > T1
            return (t - self.T1) / (self.T2 - self.T1)
        return 1.0

    def s0(self, t: float) -> float:
        """s0_init before T2, linear to s0_end on [T2, T3), s0_end from T3 on."""
        if t < self.T2:
            return self.s0_init
        if t < self.T3:  # implies T3 > T2
            return self.s0_init + (self.s0_end - self.s0_init) * (t - self.T2) / (self.T3 - self.T2)
        return self.s0_end

    def temperature(self, t: float) -> float:
        """0 before T1, tau on [T1, T3], tau/(t - T3) after T3 (tau / max(t - T3, 1))."""
        if t < self.T1:
            return 0.0
        if t <= self.T3:
            return self.tau
        return self.tau / max(t - self.T3, 1.0)
