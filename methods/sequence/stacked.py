"""Several sequence networks of one shape trained as one: the seeds of a set method's cell on a GPU.

Member b of B is a :class:`~pibench.methods.sequence.network.SequenceNet` (LSTM with
d inputs and h units, linear head to O = H x k outputs). The stack is one
``torch.nn.LSTM`` with B d inputs and B h units whose weights are block-diagonal:
member b reads inputs b d .. (b + 1) d - 1, owns units b h .. (b + 1) h - 1 of each gate
block (torch's gate rows i, f, g, o), and its head block reads only its units. The
cross-member weights start at 0 and their gradients are masked to 0 before each
step, so under Adam (elementwise: zero gradient and zero moments give a zero step)
they stay exactly 0 and each member computes its own network, fed its own
minibatch, up to the rounding of the larger kernels. On a GPU that is one set of
kernels for B networks where B processes would share the GPU by time slices.

Members with dropout on the last state (DP-RNN's) draw each its masks from a stream of
its own (:meth:`StackedSequenceNets.draw_dropout_from`): on the CPU the global
generator's state right after that member's network was made, so its masks are those
it draws training alone; on a GPU a generator seeded from its seed, apart from its
minibatches' generator (another stream, as every GPU draw is). One generator for the
stack would tie each member's masks to the others'. The members are apart only while
their numbers are finite: a member that diverges to inf or NaN reaches the others
through 0 x NaN in the shared products, and its cell's tasks fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
import torch
from torch import nn

from pibench.methods.sequence.network import SequenceNet


def _dropout_seed(seed: int) -> int:
    """A member's dropout seed on a GPU, derived from its seed: not the seed its minibatch generator takes,
    whose Philox stream it would repeat."""
    return int(np.random.SeedSequence([int(seed), 1]).generate_state(1)[0])


def member_shape(members: list[SequenceNet]) -> tuple[int, int, int, int]:
    """(d inputs, h units, horizon H, outputs per step k) that the networks of a stack share; raises for
    what cannot be stacked: no networks, step-by-step twins, differing shapes or dropout probabilities."""
    if not members:
        raise ValueError("a stack needs at least one member.")
    if not all(isinstance(m.lstm, nn.LSTM) for m in members):
        raise TypeError("stack the trainable networks, not their step-by-step twins.")
    shapes = {(cast(nn.LSTM, m.lstm).input_size, cast(nn.LSTM, m.lstm).hidden_size, int(m.horizon), int(m.k))
              for m in members}
    if len(shapes) > 1:
        raise ValueError("stacked sequence networks must share inputs, units, horizon and outputs per step.")
    if len({float(m.dropout.p) for m in members}) > 1:
        raise ValueError("stacked sequence networks must share their dropout probability.")
    return shapes.pop()


def refuse_padded(xs: Sequence[torch.Tensor]) -> None:
    """Raise for padded sequences (NaN after a sequence's end): a stack runs every step of every member,
    so such sets train alone."""
    if any(bool(torch.isnan(x).any()) for x in xs):
        raise ValueError("padded sequences (NaN) train alone: the stack reads every step of every member.")


class StackedSequenceNets(nn.Module):
    """B members (module doc) as one network: x (m, T, B d) -> (m, B, H) or (m, B, H, k)."""

    members: int
    d: int
    h: int
    horizon: int
    k: int
    mask_ih: torch.Tensor  # where the weights may be nonzero (buffers: they move with the network)
    mask_hh: torch.Tensor
    mask_head: torch.Tensor

    def __init__(self, members: list[SequenceNet]):
        super().__init__()
        self.members = len(members)
        self.d, self.h, self.horizon, self.k = member_shape(members)
        self.p = float(members[0].dropout.p)
        self._streams: tuple[list[torch.Tensor], list[int]] | None = None  # draw_dropout_from
        self._generators: list[torch.Generator] | None = None
        B, d, h, n_out = self.members, self.d, self.h, self.horizon * self.k
        self.lstm = nn.LSTM(B * d, B * h, batch_first=True)
        self.head = nn.Linear(B * h, B * n_out)
        self.register_buffer("mask_ih", torch.zeros(4 * B * h, B * d, dtype=torch.bool))
        self.register_buffer("mask_hh", torch.zeros(4 * B * h, B * h, dtype=torch.bool))
        self.register_buffer("mask_head", torch.zeros(B * n_out, B * h, dtype=torch.bool))
        mine = dict(self.named_parameters())
        with torch.no_grad():
            for p in mine.values():
                p.zero_()
            for b, member in enumerate(members):
                rows, ins, units, outs = self._blocks(b)
                theirs = dict(member.named_parameters())
                mine["lstm.weight_ih_l0"][rows[:, None], ins] = theirs["lstm.weight_ih_l0"]
                mine["lstm.weight_hh_l0"][rows[:, None], units] = theirs["lstm.weight_hh_l0"]
                mine["lstm.bias_ih_l0"][rows] = theirs["lstm.bias_ih_l0"]
                mine["lstm.bias_hh_l0"][rows] = theirs["lstm.bias_hh_l0"]
                mine["head.weight"][outs[:, None], units] = theirs["head.weight"]
                mine["head.bias"][outs] = theirs["head.bias"]
                self.mask_ih[rows[:, None], ins] = True
                self.mask_hh[rows[:, None], units] = True
                self.mask_head[outs[:, None], units] = True

    def _blocks(self, b: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Member b's gate rows (its 4 h rows in torch's order: gate, then unit), inputs, units and outputs."""
        B, d, h, n_out = self.members, self.d, self.h, self.horizon * self.k
        rows = (torch.arange(4)[:, None] * B * h + b * h + torch.arange(h)[None, :]).reshape(-1)
        return rows, torch.arange(b * d, (b + 1) * d), torch.arange(b * h, (b + 1) * h), \
            torch.arange(b * n_out, (b + 1) * n_out)

    def draw_dropout_from(self, cpu_states: Sequence[torch.Tensor], seeds: Sequence[int]) -> None:
        """Each member's dropout stream (module doc): ``cpu_states[b]``, the CPU generator's state right after
        member b's network was made; ``seeds[b]``, its seed, for a generator on a GPU."""
        if not len(cpu_states) == len(seeds) == self.members:
            raise ValueError(f"a stack of {self.members} takes one dropout stream per member.")
        self._streams, self._generators = ([s.clone() for s in cpu_states], [int(s) for s in seeds]), None

    def _dropout(self, state: torch.Tensor) -> torch.Tensor:
        """``torch.nn.functional.dropout`` of each member's block of the last state, its mask from its stream."""
        if not (self.training and self.p > 0):
            return state
        if self._streams is None:
            raise RuntimeError("a stack with dropout trains with one stream per member: call draw_dropout_from.")
        if self._generators is None or self._generators[0].device != state.device:
            states, seeds = self._streams
            if state.device.type == "cpu":
                self._generators = [torch.Generator() for _ in states]
                for g, s in zip(self._generators, states):
                    g.set_state(s)
            else:
                self._generators = [torch.Generator(device=state.device).manual_seed(_dropout_seed(s)) for s in seeds]
        noise = torch.cat([torch.empty(state.shape[0], self.h, dtype=state.dtype, device=state.device)
                           .bernoulli_(1 - self.p, generator=g) for g in self._generators], dim=1)
        return state * noise.div_(1 - self.p)  # as F.dropout: mask / (1 - p), then the product

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, (state, _) = self.lstm(x)
        out = self.head(self._dropout(state[-1])).view(x.shape[0], self.members, self.horizon, self.k)
        return out[..., 0] if self.k == 1 else out

    def mask_gradients(self) -> None:
        """Zero the gradients of the cross-member weights (called before every optimiser step)."""
        params = dict(self.named_parameters())
        for name, mask in (("lstm.weight_ih_l0", self.mask_ih), ("lstm.weight_hh_l0", self.mask_hh),
                           ("head.weight", self.mask_head)):
            grad = params[name].grad
            if grad is not None:
                grad.masked_fill_(~mask, 0.0)

    def member(self, b: int) -> SequenceNet:
        """Member b as a :class:`SequenceNet` on the CPU (its blocks copied out)."""
        net = SequenceNet(self.d, self.h, self.horizon, self.k, self.p)
        rows, ins, units, outs = self._blocks(b)
        source = {k: v.detach().cpu() for k, v in self.named_parameters()}
        blocks = {"lstm.weight_ih_l0": source["lstm.weight_ih_l0"][rows[:, None], ins],
                  "lstm.weight_hh_l0": source["lstm.weight_hh_l0"][rows[:, None], units],
                  "lstm.bias_ih_l0": source["lstm.bias_ih_l0"][rows],
                  "lstm.bias_hh_l0": source["lstm.bias_hh_l0"][rows],
                  "head.weight": source["head.weight"][outs[:, None], units], "head.bias": source["head.bias"][outs]}
        with torch.no_grad():
            for name, p in net.named_parameters():
                p.copy_(blocks[name])
        return net
