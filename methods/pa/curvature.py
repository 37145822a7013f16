"""The curvature solve of PA's intervals: g' A^+ g for every test gradient g, dense or matrix-free.

A is the Gauss-Newton matrix of :mod:`pibench.methods.pa.intervals` (paper section 3.2),
A = (1/n) sum_i sum_h J_ih J_ih' / sigma2_h over the R kept weights.

* :class:`DenseCurvature` holds A^+ (R x R, from the eigendecomposition; rank-deficient
  directions dropped) and evaluates diag(G A^+ G') by matrix products.
* :class:`MatrixFreeCurvature` never forms an R x R matrix: A v is a Jacobian-vector
  product followed by a vector-Jacobian product over chunks of the training rows
  (``torch.func.jvp`` / ``vjp``), and each test gradient's A^{-1} g comes from
  conjugate gradients (Hestenes & Stiefel 1952), all right-hand sides of a chunk at
  once, preconditioned by diag(A) (Jacobi). Memory is O(R x right-hand sides); time is
  O(iterations x training passes).
  CG converges to the dense answer g' A^+ g whenever g lies in A's range (tested to
  1e-4 relative on small models): so for the directions no data identify by the
  architecture (a recurrent layer's two bias vectors, whose difference never matters;
  :meth:`~pibench.methods.pa.intervals.FlatModel.structural_nullity`), since every gradient is
  blind to them too. It takes the rank to be R less those. Directions the dense path
  drops only because their curvature is tiny (below 1e-8 of the largest) are kept, as far
  as CG resolves them; a solve that stalls is counted in ``stats["not_converged"]``.

:func:`memory_budget` is what the dense path may use: half the free memory of the
device the matrices live on (``torch.cuda.mem_get_info`` on a GPU, ``MemAvailable``
on the CPU), unless the caller gives a limit. On a GPU that several workers share,
:func:`one_dense_at_a_time` makes the choice and the dense matrices' formation one
task at a time (a file lock per GPU), and hands the freed matrices back to the driver
before the next task looks at the free memory: without it, tasks that look at once
all see the same free memory, all go dense, and run out of it.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch.func import jvp, vjp, vmap

#: R x R float64 matrices the dense path holds at its peak (:func:`~pibench.methods.pa.intervals.pseudo_inverse`):
#: A and its eigenvectors with eigh's workspace (about 2 R^2 for a GPU's syevd), or A, the eigenvectors, the scaled
#: eigenvectors and A^+.
DENSE_MATRICES = 4


def free_memory_bytes(device: torch.device) -> int:
    """Free memory of ``device``: the GPU's free bytes, or the host's available bytes."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def memory_budget(device: torch.device, max_matrix_gib: float | None = None) -> int:
    """Bytes the dense curvature matrices may take: ``max_matrix_gib`` if given, else half the free memory."""
    if max_matrix_gib is not None:
        return int(max_matrix_gib * 2**30)
    return free_memory_bytes(device) // 2


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """An exclusive lock on the file ``path`` (created if need be), across processes, while it is entered."""
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextmanager
def one_dense_at_a_time(device: torch.device) -> Iterator[None]:
    """On a GPU: one process at a time in the block (the budget check and the dense matrices'
    formation), the cached memory emptied at its end so the next one sees it free. On the CPU: nothing."""
    if device.type != "cuda":
        yield
        return
    props = torch.cuda.get_device_properties(device)
    name = str(getattr(props, "uuid", device.index or 0))
    with exclusive(Path(tempfile.gettempdir()) / f"pibench-dense-curvature-{name}.lock"):
        try:
            yield
        finally:
            torch.cuda.empty_cache()


def dense_bytes(n_kept: int) -> int:
    """Peak bytes of the dense path for R = ``n_kept`` kept weights."""
    return DENSE_MATRICES * n_kept * n_kept * 8


@dataclass
class DenseCurvature:
    """diag(G A^+ G') from the stored pseudo-inverse ``a_inv`` (R x R)."""

    a_inv: torch.Tensor

    def quadratic_forms(self, G: torch.Tensor) -> torch.Tensor:
        """G (m, H, R) -> (m, H): g' A^+ g for every row and output."""
        return ((G @ self.a_inv) * G).sum(-1)

    def cross_forms(self, G: torch.Tensor) -> torch.Tensor:
        """G (m, H, R) -> (m, H, H): G A^+ G' for every row (its diagonal is :meth:`quadratic_forms`)."""
        return (G @ self.a_inv) @ G.transpose(1, 2)


@dataclass
class MatrixFreeCurvature:
    """diag(G A^{-1} G') by conjugate gradients on A v products (module doc); A is never formed.

    ``forward(theta, X)`` -> (m, H) is the network as a function of the kept weights and
    ``jacobian(theta, X)`` -> (m, H, R) its per-row Jacobian (for the Jacobi preconditioner);
    ``X`` the n training inputs; ``sigma2`` (H,) the variances A is built with; ``factor`` multiplies
    every quadratic form (A built with one variance, the forms wanted with another).
    """

    forward: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    jacobian: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    theta: torch.Tensor
    X: torch.Tensor
    sigma2: torch.Tensor
    chunk_size: int | None = 256
    rtol: float = 1e-10
    max_iter: int | None = None
    factor: float = 1.0
    stats: dict = field(default_factory=lambda: {"solves": 0, "not_converged": 0, "max_iterations": 0})
    _diagonal: torch.Tensor | None = None
    _batched: bool = True  # False once vmap failed on this network: then one column at a time

    def _chunks(self):
        n = self.X.shape[0]
        size = n if not self.chunk_size else int(self.chunk_size)
        for start in range(0, n, size):
            yield self.X[start:start + size]

    def matvec(self, V: torch.Tensor) -> torch.Tensor:
        """A V for V (R, b): per chunk, J V (forward mode), then J' (J V / sigma2) (reverse mode)."""
        out = torch.zeros_like(V)
        weight = 1.0 / self.sigma2
        for Xc in self._chunks():
            f = lambda th, Xc=Xc: self.forward(th, Xc)  # noqa: E731
            vjp_fn = vjp(f, self.theta)[1]  # (output, vjp_fn); torch types the has_aux=True triple too

            def product(v, f=f, vjp_fn=vjp_fn):
                return vjp_fn(jvp(f, (self.theta,), (v,))[1] * weight)[0]

            if self._batched:
                try:
                    out += vmap(product, in_dims=1, out_dims=1)(V)
                    continue
                except RuntimeError:  # a kernel vmap cannot batch (torch.nn.RNN)
                    self._batched = False
            out += torch.stack([product(V[:, j]) for j in range(V.shape[1])], dim=1)
        return out / self.X.shape[0]

    def diagonal(self) -> torch.Tensor:
        """diag(A) (R,) = (1/n) sum_i sum_h J_ih^2 / sigma2_h, from per-row Jacobians chunk by chunk
        (the Jacobi preconditioner; memory O(chunk x H x R))."""
        if self._diagonal is None:
            total = torch.zeros_like(self.theta)
            for Xc in self._chunks():
                J = self.jacobian(self.theta, Xc)  # (c, H, R)
                total += (J.square() / self.sigma2[None, :, None]).sum((0, 1))
            self._diagonal = total / self.X.shape[0]
        return self._diagonal

    def solve(self, B: torch.Tensor) -> torch.Tensor:
        """A^{-1} B for B (R, b) by Jacobi-preconditioned conjugate gradients, every column at once (x0 = 0)."""
        tiny = torch.finfo(B.dtype).tiny
        d = self.diagonal()
        inv_d = torch.where(d > 0, 1.0 / d.clamp_min(tiny), torch.ones_like(d))[:, None]
        x = torch.zeros_like(B)
        r = B.clone()
        z = inv_d * r
        p = z.clone()
        rz = (r * z).sum(0)
        target = (self.rtol ** 2) * (r * r).sum(0).clamp_min(tiny)
        limit = self.max_iter or 10 * B.shape[0] + 10  # finite precision needs more than R steps (~6R seen)
        iterations = 0
        active = (r * r).sum(0) > target
        while iterations < limit and bool(active.any()):
            Ap = self.matvec(p)
            step = torch.where(active, rz / (p * Ap).sum(0).clamp_min(tiny), 0.0)
            x += step * p
            r -= step * Ap
            z = inv_d * r
            rz_new = (r * z).sum(0)
            p = z + torch.where(active, rz_new / rz.clamp_min(tiny), 0.0) * p
            rz = rz_new
            active = (r * r).sum(0) > target
            iterations += 1
        self.stats["solves"] += B.shape[1]
        self.stats["not_converged"] += int(active.sum())
        self.stats["max_iterations"] = max(self.stats["max_iterations"], iterations)
        return x

    def quadratic_forms(self, G: torch.Tensor) -> torch.Tensor:
        """G (m, H, R) -> (m, H): g' A^{-1} g for every row and output."""
        m, H, R = G.shape
        flat = G.reshape(m * H, R)
        Z = self.solve(flat.T)  # (R, m H)
        return (flat * Z.T).sum(-1).reshape(m, H) * self.factor

    def cross_forms(self, G: torch.Tensor) -> torch.Tensor:
        """G (m, H, R) -> (m, H, H): G A^{-1} G' for every row, one solve per (row, output)."""
        m, H, R = G.shape
        Z = self.solve(G.reshape(m * H, R).T)  # (R, m H)
        return (G @ Z.T.reshape(m, H, R).transpose(1, 2)) * self.factor
