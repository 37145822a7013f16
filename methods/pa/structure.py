"""Effective structure of a sparsified network: drop kept weights that cannot reach the output.

After thresholding (paper section 4) some kept weights are dead: e.g. the incoming weights
and bias of a hidden unit whose every outgoing weight was pruned. They do not change
the fitted function, but counting them inflates R (hence sigma2_hat), makes -Hess l_n
singular, and in an RNN would count a lag as selected through a unit that feeds
nothing. A kept weight j is dead iff the column j of the Jacobian d mu(x_i)/d beta is
zero on every training input; with a random vector r ~ N(0, I) over the outputs,
column j is zero iff (J' r)_j = 0 almost surely, so one backward pass of sum(r * mu)
finds them all. The pass runs on a float64 copy in eval mode, so a unit saturated in
float32 (sigmoid(z) == 1 for z > ~17) still passes its gradient and is not taken for dead.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

import torch
from torch import nn

from pibench.methods.pa.networks import ElmanRNN


def live_masks(model: nn.Module, masks: Mapping[str, torch.Tensor], X: torch.Tensor,
               generator: torch.Generator | None = None, chunk_size: int = 4096) -> dict[str, torch.Tensor]:
    """Masks restricted to the kept weights whose gradient is nonzero on some row of X.

    ``model`` must already have its pruned weights at exactly 0; it is not modified.
    ``masks`` maps parameter names to bool tensors (True = kept); a trainable parameter
    absent from ``masks`` counts as all kept, and frozen parameters (requires_grad False)
    keep their mask. Rows are processed in chunks of ``chunk_size``. Returns a mask for
    every trainable parameter (True = kept and live).
    """
    params = dict(model.named_parameters())
    unknown = sorted(set(masks) - set(params))
    if unknown:
        raise ValueError(f"masks name unknown parameters: {unknown}")
    probe = copy.deepcopy(model).to(torch.float64).eval()
    probe_params = dict(probe.named_parameters())
    reach = {name: torch.zeros_like(p, dtype=torch.bool) for name, p in params.items()}
    X = X.to(torch.float64)
    # cuDNN's recurrent kernels refuse a backward pass in eval mode ("cudnn RNN backward can only be called
    # in training mode"); torch's own kernels take it, and eval keeps dropout off. A no-op on the CPU.
    with torch.backends.cudnn.flags(enabled=False):
        for start in range(0, X.shape[0], chunk_size):
            probe.zero_grad(set_to_none=True)
            out = probe(X[start:start + chunk_size])
            weights = torch.randn(out.shape, generator=generator, dtype=out.dtype).to(out.device)
            (weights * out).sum().backward()
            for name, p in probe_params.items():
                if p.grad is not None:
                    reach[name] |= p.grad != 0
    out_masks = {}
    for name, p in params.items():
        kept = torch.as_tensor(masks[name]).bool() if name in masks else torch.ones_like(p, dtype=torch.bool)
        out_masks[name] = kept & reach[name] if p.requires_grad else kept
    return out_masks


def drop_idle_units(rnn: ElmanRNN, masks: Mapping[str, torch.Tensor], prefix: str = "rnn.") -> tuple[ElmanRNN, dict]:
    """An :class:`~pibench.methods.pa.networks.ElmanRNN` without the hidden units no kept weight touches.

    Such a unit's state is tanh(0) = 0 at every step and its outgoing weights are 0, so
    removing it leaves the function and the kept weights unchanged, while the Jacobians of
    the interval step (paper-scale nets: 1,000 units, a few hundred kept weights) shrink
    with the square of the width. ``masks`` are keyed ``prefix + parameter name``; returns
    a smaller copy (same dtype) and its masks under the same keys.
    """
    m = {name: torch.as_tensor(masks[prefix + name]).bool() if prefix + name in masks
         else torch.ones_like(p, dtype=torch.bool) for name, p in rnn.named_parameters()}
    touched = (m["input.weight"].any(1) | m["input.bias"] | m["recurrent.weight"].any(1)
               | m["recurrent.weight"].any(0) | m["out.weight"].any(0))
    units = torch.nonzero(touched).reshape(-1)
    if len(units) == 0:  # nothing kept in the cell: keep one unit, all its weights pruned
        units = torch.zeros(1, dtype=torch.long)
    small = ElmanRNN(rnn.input.in_features, len(units), outputs=rnn.out.out_features).to(rnn.out.weight.dtype)
    picks = {"input.weight": lambda t: t[units], "input.bias": lambda t: t[units],
             "recurrent.weight": lambda t: t[units][:, units], "out.weight": lambda t: t[:, units],
             "out.bias": lambda t: t}
    params = dict(rnn.named_parameters())
    small_masks = {}
    with torch.no_grad():
        for name, p in small.named_parameters():
            small_masks[prefix + name] = picks[name](m[name])
            p.copy_(picks[name](params[name].detach()) * small_masks[prefix + name])
    return small, small_masks
