"""Stochastic gradient Hamiltonian Monte Carlo in momentum-SGD form (paper section 4).

Per parameter beta with gradient g = grad U(beta) (in ``.grad``; the trainer stores the
per-sample negative log posterior gradient there), momentum m, step size lr, temperature
tau and training size n:

    step 1:   buf <- g                                           (no noise)
    step k>1: buf <- m buf + g + sqrt(2 (1 - m) tau / (n lr)) xi,   xi ~ N(0, I)
    beta <- beta - lr buf

At tau = 0 this is exactly ``torch.optim.SGD(lr, momentum=m)`` (dampening 0, no Nesterov).
Entries whose mask is False are frozen: their buffer is set to 0 and the parameter is
not changed (noise included), so weights pruned to 0 stay exactly 0.

A stiff linear term of the gradient can be taken implicitly: with ``step(stiffness=
{p: k})`` the gradient in ``.grad`` leaves out a term k * beta (k >= 0 elementwise),
and the update is buf <- (m buf + g + noise + k beta) / (1 + lr k), beta <- beta - lr buf,
i.e. beta_new = (beta - lr (m buf + g + noise)) / (1 + lr k): the term evaluated at
beta_new (linearly implicit Euler). It equals the explicit step to first order in
lr k and stays stable when lr k exceeds explicit momentum SGD's bound 2 (1 + m),
as the spike of PA's prior does when lr / (s0 n) is large.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import torch


class SGHMC(torch.optim.Optimizer):
    """SGHMC with per-group ``lr``, ``momentum``, ``temperature`` and ``n`` (see module doc).

    ``generator`` (optional ``torch.Generator``) drives the injected noise; a list of B
    generators drives a stack of B independent networks (every parameter (B, ...)), member b's
    noise coming from generator b as if it were trained alone; ``masks`` maps a
    parameter to a bool tensor of its shape (True = trainable). Masks can also be set later
    with :meth:`set_masks`; the temperature with :meth:`set_temperature` or
    ``param_groups[i]["temperature"]``.
    """

    def __init__(
        self,
        params: Iterable,
        lr: float,
        momentum: float = 0.9,
        temperature: float = 1.0,
        *,
        n: int,
        generator: torch.Generator | list[torch.Generator] | None = None,
        masks: Mapping[torch.Tensor, torch.Tensor] | None = None,
    ) -> None:
        if not lr > 0:
            raise ValueError(f"lr must be > 0, got {lr}")
        if not 0.0 <= momentum < 1.0:
            raise ValueError(f"momentum must be in [0, 1), got {momentum}")
        if not temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if not n > 0:
            raise ValueError(f"n (training size) must be > 0, got {n}")
        defaults = dict(lr=lr, momentum=momentum, temperature=temperature, n=n)
        super().__init__(params, defaults)
        self.generator = generator
        self._masks: dict[torch.Tensor, torch.Tensor] = {}
        if masks:
            params_set = {id(p) for p in self._all_params()}
            for p, mask in masks.items():
                if id(p) not in params_set:
                    raise ValueError("mask given for a tensor that is not a parameter of this optimizer")
                self._set_mask(p, mask)

    # masks / temperature ------------------------------------------------------------------
    def _all_params(self) -> list[torch.Tensor]:
        return [p for group in self.param_groups for p in group["params"]]

    def _set_mask(self, p: torch.Tensor, mask: torch.Tensor | None) -> None:
        if mask is None:
            self._masks.pop(p, None)
            return
        mask = torch.as_tensor(mask, device=p.device)
        if mask.dtype != torch.bool:
            raise ValueError(f"masks must be bool tensors, got {mask.dtype}")
        if mask.shape != p.shape:
            raise ValueError(f"mask shape {tuple(mask.shape)} != parameter shape {tuple(p.shape)}")
        self._masks[p] = mask

    def set_masks(self, masks: Sequence[torch.Tensor | None]) -> None:
        """One mask (bool tensor, or None = no mask) per parameter, in param-group order."""
        params = self._all_params()
        if len(masks) != len(params):
            raise ValueError(f"got {len(masks)} masks for {len(params)} parameters")
        for p, mask in zip(params, masks):
            self._set_mask(p, mask)

    def mask_of(self, p: torch.Tensor) -> torch.Tensor | None:
        """The mask of parameter ``p`` (None if unmasked)."""
        return self._masks.get(p)

    def set_temperature(self, temperature: float) -> None:
        """Set the temperature of every param group."""
        if not temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        for group in self.param_groups:
            group["temperature"] = temperature

    @staticmethod
    def _noise_std(group: dict) -> float:
        lr, m, tau, n = group["lr"], group["momentum"], group["temperature"], group["n"]
        return math.sqrt(2.0 * (1.0 - m) * tau / (n * lr)) if tau > 0 else 0.0

    def noise_std(self) -> float:
        """sqrt(2 (1 - m) tau / (n lr)) of the (first) param group: the scale of the injected noise."""
        return self._noise_std(self.param_groups[0])

    # update ---------------------------------------------------------------------------------
    @torch.no_grad()
    def step(self, closure=None, stiffness: Mapping[torch.Tensor, torch.Tensor] | None = None,
             noise_scale: torch.Tensor | None = None):
        """One update; ``stiffness`` ({parameter: k}) takes a term k * beta implicitly (module doc);
        ``noise_scale`` (a 0-dim tensor) replaces every group's noise scale and always draws the noise
        (what a CUDA graph of the step reads at replay)."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, m = group["lr"], group["momentum"]
            noise_std = self._noise_std(group)
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if grad.is_sparse:
                    raise RuntimeError("SGHMC does not support sparse gradients")
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = grad.detach().clone()
                    state["momentum_buffer"] = buf
                else:
                    buf.mul_(m).add_(grad)
                    if noise_scale is not None:
                        buf.addcmul_(self._noise(p), noise_scale)
                    elif noise_std > 0.0:
                        buf.add_(self._noise(p), alpha=noise_std)
                if stiffness is not None and p in stiffness:
                    k = stiffness[p]
                    buf.addcmul_(k, p).div_(1.0 + lr * k)
                mask = self._masks.get(p)
                if mask is not None:
                    buf.masked_fill_(~mask, 0.0)  # frozen entries: beta - lr * 0 == beta exactly
                p.add_(buf, alpha=-lr)
        return loss

    def _noise(self, p: torch.Tensor) -> torch.Tensor:
        """xi ~ N(0, I) of p's shape, drawn where the generator lives (the weights' device, in PA);
        member b's slice of a stack from generator b."""
        if isinstance(self.generator, list):
            noise = torch.stack([torch.randn(p.shape[1:], generator=g, dtype=p.dtype, device=g.device)
                                 for g in self.generator])
        else:
            noise = torch.randn(p.shape, generator=self.generator, dtype=p.dtype,
                                device=self.generator.device if self.generator else "cpu")
        return noise.to(p.device)
