"""Effective structure of a sparsified network: drop kept weights that cannot reach the output.

After thresholding (SPEC §3.1) some kept weights are dead: e.g. the incoming weights
and bias of a hidden unit whose every outgoing weight was pruned. They do not change
the fitted function, but counting them inflates R (hence sigma2_hat = RSS/(n - R)),
makes -Hess l_n singular, and in an RNN would count a lag as selected through a unit
that feeds nothing. A kept weight j is dead iff the column j of the Jacobian
d mu(x_i)/d beta is zero on every training input; with a random vector r ~ N(0, I)
over the outputs, column j is zero iff (J' r)_j = 0 almost surely, so one backward
pass of sum(r * mu) finds them all.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn


def live_masks(model: nn.Module, masks: Mapping[str, torch.Tensor], X: torch.Tensor,
               generator: torch.Generator | None = None, chunk_size: int = 4096) -> dict[str, torch.Tensor]:
    """Masks restricted to the kept weights whose gradient is nonzero on some row of X.

    ``model`` must already have its pruned weights at exactly 0. Rows are processed in
    chunks of ``chunk_size``; the returned masks are bool tensors (True = kept and live).
    """
    params = dict(model.named_parameters())
    reach = {name: torch.zeros_like(p, dtype=torch.bool) for name, p in params.items()}
    for start in range(0, X.shape[0], chunk_size):
        model.zero_grad(set_to_none=True)
        out = model(X[start:start + chunk_size])
        weights = torch.randn(out.shape, generator=generator, dtype=out.dtype)
        (weights * out).sum().backward()
        for name, p in params.items():
            if p.grad is not None:
                reach[name] |= p.grad != 0
    model.zero_grad(set_to_none=True)
    return {name: torch.as_tensor(mask).bool() & reach[name] for name, mask in masks.items()}
