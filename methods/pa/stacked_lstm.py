"""Several PA-LSTMs of one shape trained as one: the seeds of a PA-LSTM cell on a GPU.

Member b of B is a :class:`~pibench.methods.sequence.network.SequenceNet` (LSTM with d
inputs and h units, linear head to O = H x k outputs, no dropout). The stack's parameters
are the members' parameters, each with a leading axis of B, under the members' names and
in their order, so PA's trainer treats it as it treats
:class:`~pibench.methods.pa.networks.StackedElmanRNNs`: member b's minibatches, SGHMC noise
and prior terms come from its own slice and its own generator (:func:`~pibench.methods.pa.
trainer.train_pa` with one seed per member), as they would alone.

The forward assembles the block-diagonal weights of one torch LSTM with B d inputs and B h
units (member b reads inputs b d .. (b + 1) d - 1 and owns units b h .. (b + 1) h - 1 of
each of torch's gate blocks i, f, g, o, the layout of
:class:`~pibench.methods.sequence.stacked.StackedSequenceNets`) and runs it: on a GPU one
cuDNN call for B networks (meant to: not yet run on a GPU), where B processes would share
the GPU by time slices. The cross-member weights are not parameters but exact zeros in
every forward, so no gradient, noise or prior reaches them and each member computes its
own network up to the rounding of the larger kernels, while its numbers are finite: a
member that diverges to inf or NaN reaches the others through 0 x NaN in the shared
products (:meth:`~pibench.methods.pa.lstm_method.PALSTM.fit_together` then refuses the
cell, and its seeds train alone). Padded sets (NaN after a sequence's end) train alone.
"""

from __future__ import annotations

import warnings
from typing import cast

import torch
from torch import nn
from torch.func import functional_call

from pibench.methods.sequence.network import SequenceNet
from pibench.methods.sequence.stacked import member_shape

#: the member parameters of the LSTM, torch's names (the stack's are ``lstm.<name>``)
LSTM_WEIGHTS = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")


class StackedPALSTMs(nn.Module):
    """B members (module doc) as one network: x (m, B, T, d) -> (m, B, H), or (m, B, H, k) for k > 1."""

    def __init__(self, members: list[SequenceNet]):
        super().__init__()
        self.members = len(members)
        self.d, self.h, self.horizon, self.k = member_shape(members)
        if any(m.dropout.p > 0 for m in members):  # PA's networks have none; this stack would drop it
            raise ValueError("networks with dropout train alone: a PA stack has no dropout.")
        self.lstm, self.head = nn.Module(), nn.Module()
        for part, names in ((self.lstm, LSTM_WEIGHTS), (self.head, ("weight", "bias"))):
            prefix = "lstm." if part is self.lstm else "head."
            for name in names:
                stacked = torch.stack([dict(m.named_parameters())[prefix + name].detach() for m in members])
                part.register_parameter(name, nn.Parameter(stacked.clone()))
        # the LSTM that runs the assembled weights: not a submodule, and its own weights (never used) on the meta
        # device, so they take no memory; no dropout, so its train/eval mode does not matter
        self.__dict__["_runner"] = nn.LSTM(self.members * self.d, self.members * self.h, batch_first=True,
                                           device="meta")

    def _block_diagonal(self, w: torch.Tensor, width: int) -> torch.Tensor:
        """(B, 4 h, width) member weights -> (4 B h, B width): member b's rows of gate g at g B h + b h, its
        columns at b width; zero elsewhere."""
        B, h = self.members, self.h
        eye = torch.eye(B, dtype=w.dtype, device=w.device)
        return torch.einsum("bgic,be->gbiec", w.view(B, 4, h, width), eye).reshape(4 * B * h, B * width)

    def _gate_rows(self, v: torch.Tensor) -> torch.Tensor:
        """(B, 4 h) member biases -> (4 B h,) in the same row order."""
        return v.view(self.members, 4, self.h).transpose(0, 1).reshape(-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m, B, T, d = x.shape
        if B != self.members or d != self.d:
            raise ValueError(f"the stack takes (m, {self.members}, T, {self.d}) inputs; got {tuple(x.shape)}.")
        p = dict(self.named_parameters())
        weights = {"weight_ih_l0": self._block_diagonal(p["lstm.weight_ih_l0"], self.d),
                   "weight_hh_l0": self._block_diagonal(p["lstm.weight_hh_l0"], self.h),
                   "bias_ih_l0": self._gate_rows(p["lstm.bias_ih_l0"]),
                   "bias_hh_l0": self._gate_rows(p["lstm.bias_hh_l0"])}
        runner = cast(nn.LSTM, self.__dict__["_runner"])
        with warnings.catch_warnings():  # cuDNN compacts the assembled weights on each call, as it must
            warnings.filterwarnings("ignore", message="RNN module weights are not part of single contiguous")
            _, (state, _) = functional_call(runner, weights, (x.permute(0, 2, 1, 3).reshape(m, T, B * d),))
        last = state[-1].view(m, B, self.h)
        out = torch.einsum("mbj,boj->mbo", last, p["head.weight"]) + p["head.bias"]
        return out if self.k == 1 else out.view(m, B, self.horizon, self.k)

    def member(self, b: int) -> SequenceNet:
        """Member b as a :class:`SequenceNet` on the CPU (its slices copied out)."""
        net = SequenceNet(self.d, self.h, self.horizon, self.k)
        mine = {name: p.detach().cpu() for name, p in self.named_parameters()}
        with torch.no_grad():
            for name, p in net.named_parameters():
                p.copy_(mine[name][b])
        return net

    @staticmethod
    def member_masks(masks: dict[str, torch.Tensor], b: int) -> dict[str, torch.Tensor]:
        """Member b's slice of the stack's masks (:func:`~pibench.methods.pa.trainer.train_pa`'s)."""
        return {name: mask[b].clone() for name, mask in masks.items()}
