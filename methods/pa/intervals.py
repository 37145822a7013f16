"""Asymptotic-normal prediction intervals for a sparse network (paper section 3.2 and
its appendix on asymptotic normality).

Setting: a network mu(x; beta) with Gaussian likelihood, trained and sparsified;
gamma-hat = the kept (mask True) weights, R = their number, n = training size,
H = number of outputs (horizons). All computations run in float64 on a copy of the
model; pruned entries are held fixed at exactly 0 (whatever the module stores).

* sigma2_hat_h = sum_i (y_ih - mu_ih)^2 / (n - (r + dof_offset) / H)   (per horizon h; r = rank(A),
  = R unless A is singular, see below; the H horizons share the r identified weights, so each
  is charged r / H of them: the pooled RSS over all nH outputs has nH - r degrees of freedom.
  H = 1 gives the OLS n - r.)
* l_n(beta) = (1/n) sum_i sum_h [ -(y_ih - mu_ih)^2 / (2 sigma2_hat_h) ] + const
* A = -Hess l_n over the kept weights
    = (1/n) sum_i sum_h [ J_ih J_ih' - (y_ih - mu_ih) Hess mu_ih ] / sigma2_hat_h   ("exact")
    ~ (1/n) sum_i sum_h J_ih J_ih' / sigma2_hat_h                                    ("ggn")
* varsigma2_h(x) = g_h' A^{-1} g_h with g_h = d mu_h(x) / d gamma   (diagonal of G' A^{-1} G)
* interval_h: mu_h(x) +/- z_{alpha/(2H)} sqrt(varsigma2_h(x) / n + sigma2_hat_h)
  (Bonferroni over the H horizons, so joint coverage >= 1 - alpha; H = 1 gives z_{alpha/2}).
  Beyond the paper, the joint band uses the whole H x H covariance G' A^{-1} G / n + S, S the
  training residuals' covariance (the horizons' errors are correlated), and the quantile of the
  max of the correlated normal (:mod:`pibench.methods.pa.joint_band`).

Normalisation (decided by the OLS test in tests/test_pa_intervals.py). The paper's
§4 reads ``varsigma2/(n - R) + sigma2_hat`` with ``sigma2_hat = RSS/(n - R - 1)``. For a linear
model mu = x'beta (R = p + 1 coefficients, intercept included, Hess mu = 0) one has
A = X'X / (n sigma2_hat), so varsigma2(x0) = n sigma2_hat x0'(X'X)^{-1} x0 and
the variance of mu-hat(x0) is varsigma2 / n, not varsigma2 / (n - R). The
statsmodels OLS predictive variance sigma2_ols (1 + x0'(X'X)^{-1} x0) with
sigma2_ols = RSS/(n - p - 1) = RSS/(n - R) is then reproduced exactly by

    varsigma2 / n + sigma2_hat,   sigma2_hat = RSS / (n - R)      (dof_offset = 0, default).

(Equivalently: compute A with the maximum-likelihood variance RSS/n and divide by
n - R; the two readings give identical numbers.) ``dof_offset=1`` gives the paper's
literal RSS/(n - R - 1), which differs from OLS by a factor (n - R)/(n - R - 1).

Singular / indefinite A (redundant weights, a near-linear regime, or a non-convex
point for "exact"): eigenvalues <= eps * lambda_max are treated as directions the data
do not identify, and A^{-1} is the pseudo-inverse V diag(1/lambda, 0) V' over the rest
("pinv", as statsmodels' OLS does for a rank-deficient design). The number of
identified directions r = rank(A) then replaces R in the degrees of freedom,
sigma2_hat = RSS / (n - r - dof_offset), so a linear model with a duplicated column
still reproduces statsmodels' OLS prediction interval exactly. A is built first with
the ML variance RSS/n; since every horizon shares the degrees of freedom, moving to
the final sigma2_hat rescales A by one factor. The fallback and the rank are recorded
in ``diagnostics``. (Raising the small eigenvalues instead -- eigen-clipping -- makes
the variance explode along any direction the test gradient touches numerically.)
"""

from __future__ import annotations

import copy
import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch
from scipy.stats import norm
from torch.func import functional_call, grad, jacrev, vmap

from pibench.data_loaders.validation import check_alpha
from pibench.methods.device import current_device
from pibench.methods.pa.curvature import (
    DenseCurvature,
    MatrixFreeCurvature,
    dense_bytes,
    memory_budget,
    one_dense_at_a_time,
)
from pibench.methods.pa.joint_band import correlation, max_abs_normal_quantiles

HessianKind = Literal["auto", "exact", "ggn"]
CurvatureKind = Literal["auto", "dense", "matrix_free"]


def _as_double(a, device: torch.device) -> torch.Tensor:
    if isinstance(a, torch.Tensor):
        return a.detach().to(device=device, dtype=torch.float64)
    return torch.as_tensor(np.asarray(a), dtype=torch.float64, device=device)


def _clock(device: torch.device) -> float:
    """Seconds, once the device's queued work is done (a GPU runs asynchronously)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter()


def _chunks(n: int, size: int | None):
    size = n if size is None or size <= 0 else int(size)
    for start in range(0, n, size):
        yield slice(start, min(start + size, n))


class FlatModel:
    """A float64 copy of ``model`` seen as a function of the flat vector of kept weights.

    ``masks`` maps parameter names to bool tensors of the parameter's shape (True =
    kept); ``None``, or a name absent from ``masks``, means every entry is kept.
    Parameters with ``requires_grad=False`` are held fixed and not counted. The flat
    vector ``theta`` (length R) lists the kept entries parameter by parameter
    (``named_parameters`` order, row-major within a parameter); pruned entries are
    fixed at 0. The copy is put in eval mode (no dropout, running BatchNorm stats) and lives
    on :func:`~pibench.methods.device.current_device`, as do all the interval computations.
    """

    def __init__(self, model: torch.nn.Module, masks: Mapping[str, torch.Tensor] | None = None):
        masks = dict(masks or {})
        params = dict(model.named_parameters())
        unknown = sorted(set(masks) - set(params))
        if unknown:
            raise ValueError(f"masks name unknown parameters: {unknown}")
        self.names: list[str] = []
        self.shapes: list[torch.Size] = []
        self.kept_entries: dict[str, set[int]] = {}
        kept: list[torch.Tensor] = []
        offset = 0
        for name, p in params.items():
            if not p.requires_grad:
                continue
            if name in masks:
                m = torch.as_tensor(masks[name]).detach().to("cpu")
                if m.shape != p.shape:
                    raise ValueError(f"mask for {name!r} has shape {tuple(m.shape)}, parameter {tuple(p.shape)}")
                idx = torch.nonzero(m.reshape(-1).bool(), as_tuple=False).reshape(-1)
            else:
                idx = torch.arange(p.numel())
            self.names.append(name)
            self.shapes.append(p.shape)
            self.kept_entries[name] = set(idx.tolist())
            kept.append(idx + offset)
            offset += p.numel()
        self.n_total = offset
        device = current_device()
        self.kept_index = (torch.cat(kept) if kept else torch.zeros(0, dtype=torch.long)).to(device)
        self.net = copy.deepcopy(model).to(device=device, dtype=torch.float64).eval()
        full = torch.cat([params[name].detach().to(device, torch.float64).reshape(-1) for name in self.names]) \
            if self.names else torch.zeros(0, dtype=torch.float64, device=device)
        self.theta0 = full[self.kept_index].clone()
        self.per_row_jacobian = True  # set to False once vmap fails on this module

    @property
    def n_kept(self) -> int:
        """R, the number of kept weights."""
        return int(self.kept_index.numel())

    def structural_nullity(self) -> int:
        """Directions no data can identify, known from the architecture alone: torch's recurrent layers
        add two bias vectors (``bias_ih_lK`` + ``bias_hh_lK``) and only their sum matters, so each entry
        kept in both is one such direction. (Weights that cannot reach the output are pruned by PA.)"""
        count = 0
        for name, entries in self.kept_entries.items():
            if "bias_ih_l" in name:
                count += len(entries & self.kept_entries.get(name.replace("bias_ih_l", "bias_hh_l"), set()))
        return count

    def to_params(self, theta: torch.Tensor) -> dict[str, torch.Tensor]:
        """Flat kept weights -> {name: tensor}, pruned entries exactly 0 (differentiable in theta)."""
        full = torch.zeros(self.n_total, dtype=theta.dtype, device=theta.device)
        full = full.index_put((self.kept_index,), theta)
        out, start = {}, 0
        for name, shape in zip(self.names, self.shapes):
            k = shape.numel()
            out[name] = full[start:start + k].view(shape)
            start += k
        return out

    def forward(self, theta: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
        """mu(X; theta) as an (m, H) tensor (a (m,) output becomes (m, 1))."""
        out = functional_call(self.net, self.to_params(theta), (X,))
        return out.reshape(X.shape[0], -1)

    def log_likelihood(self, theta: torch.Tensor, X: torch.Tensor, Y: torch.Tensor,
                       sigma2: torch.Tensor, n: int | None = None) -> torch.Tensor:
        """l = -(1/n) sum_i sum_h (y_ih - mu_ih)^2 / (2 sigma2_h), constant dropped.

        ``n`` defaults to len(X); pass the full training size to get one chunk's share
        of the average log-likelihood.
        """
        n = X.shape[0] if n is None else n
        r = Y - self.forward(theta, X)
        return -(r.square() / (2.0 * sigma2)).sum() / n

    def hessian(self, theta, X, Y, sigma2, *, chunk_size: int | None = 256,
                vmap_chunk: int | None = 512) -> torch.Tensor:
        """Exact Hessian of the average log-likelihood l_n over the kept weights, (R, R).

        Reverse-over-reverse (``jacrev(grad(l))``), summed over chunks of training rows.
        """
        n = X.shape[0]
        hess = torch.zeros(self.n_kept, self.n_kept, dtype=torch.float64, device=theta.device)
        for sl in _chunks(n, chunk_size):
            f = lambda th, Xc=X[sl], Yc=Y[sl]: self.log_likelihood(th, Xc, Yc, sigma2, n)  # noqa: E731
            hess += jacrev(grad(f), chunk_size=vmap_chunk)(theta)
        return 0.5 * (hess + hess.T)

    def jacobian(self, theta, X, *, chunk_size: int | None = 256,
                 vmap_chunk: int | None = 512) -> torch.Tensor:
        """d mu(X) / d theta, shape (m, H, R): per-row gradients, vmapped over rows.

        A jacrev of the batched forward backpropagates through the whole chunk once per
        output row (quadratic in the chunk); per-row gradients are linear. Modules whose
        kernels vmap cannot batch (e.g. ``torch.nn.RNN``) fall back to the batched jacrev.
        A module with a ``row_jacobians(params, X)`` method ({name: (m, H, *shape)}, as the
        step-by-step sequence network has) gives them itself, faster than vmap.
        """
        def one_row(th, x):
            return self.forward(th, x[None])[0]  # (H,)

        per_row = vmap(jacrev(one_row), in_dims=(None, 0), chunk_size=vmap_chunk)
        own = getattr(self.net, "row_jacobians", None)
        parts = []
        for sl in _chunks(X.shape[0], chunk_size):
            if own is not None:
                by_name = own(self.to_params(theta), X[sl])
                full = torch.cat([by_name[name].reshape(sl.stop - sl.start, -1, shape.numel())
                                  for name, shape in zip(self.names, self.shapes)], dim=2)
                parts.append(full[:, :, self.kept_index])
                continue
            if self.per_row_jacobian:
                try:
                    parts.append(per_row(theta, X[sl]))
                    continue
                except RuntimeError:
                    self.per_row_jacobian = False
            parts.append(jacrev(lambda th, Xc=X[sl]: self.forward(th, Xc), chunk_size=vmap_chunk)(theta))
        return torch.cat(parts, dim=0)

    def gauss_newton(self, theta, X, sigma2, *, chunk_size: int | None = 256,
                     vmap_chunk: int | None = 512) -> torch.Tensor:
        """GGN / Fisher approximation of -Hess l_n: (1/n) sum_i sum_h J_ih J_ih' / sigma2_h, (R, R)."""
        n = X.shape[0]
        A = torch.zeros(self.n_kept, self.n_kept, dtype=torch.float64, device=theta.device)
        w = 1.0 / sigma2.sqrt()
        for sl in _chunks(n, chunk_size):
            J = self.jacobian(theta, X[sl], chunk_size=None, vmap_chunk=vmap_chunk)  # (c, H, R)
            Jw = (J * w[None, :, None]).reshape(-1, self.n_kept)
            A += Jw.T @ Jw
        A /= n
        return 0.5 * (A + A.T)


def pseudo_inverse(A: torch.Tensor, eps: float = 1e-8) -> tuple[torch.Tensor, dict]:
    """Pseudo-inverse of the symmetric matrix A, eigenvalues <= eps * lambda_max counted as 0.

    Returns (A^+, {"fallback": "pinv" or None, "rank", "n_null", "n_negative",
    "min_eigenvalue", "max_eigenvalue"}); A^+ = A^{-1} when every eigenvalue is above the
    cutoff. ``n_negative`` counts eigenvalues below -eps * lambda_max (negative curvature,
    dropped like null directions; only an explicitly requested exact Hessian can have them).
    """
    A = A if torch.equal(A, A.T) else 0.5 * (A + A.T)  # FlatModel's are exactly symmetric: not copied
    lam, V = torch.linalg.eigh(A)
    del A  # a symmetrised copy goes at once
    lam_min, lam_max = float(lam[0]), float(lam[-1])
    if not lam_max > 0.0:
        raise ValueError(
            f"-Hessian has no positive eigenvalue (max {lam_max:.3g}); the kept weights do "
            "not affect the fitted outputs"
        )
    identified = lam > eps * lam_max
    inv_lam = torch.zeros_like(lam)
    inv_lam[identified] = 1.0 / lam[identified]
    inv = (V * inv_lam) @ V.T
    del V
    rank = int(identified.sum())
    info = {
        "fallback": "pinv" if rank < len(lam) else None,
        "rank": rank,
        "n_null": len(lam) - rank,
        "n_negative": int((lam < -eps * lam_max).sum()),
        "min_eigenvalue": lam_min,
        "max_eigenvalue": lam_max,
    }
    inv = inv + inv.T  # peak memory: curvature.DENSE_MATRICES
    return inv.mul_(0.5), info


@dataclass
class AsymptoticNormalIntervals:
    """Fitted state of the asymptotic-normal intervals; build with :func:`fit_asymptotic_normal`.

    ``sigma2_hat`` has shape (H,) (H = 1 for a single output); ``curvature`` evaluates
    g' A^{-1} g with A = -Hess l_n (or its GGN) over the R = ``n_kept`` kept weights, from the
    dense inverse or matrix-free (:mod:`pibench.methods.pa.curvature`).
    """

    flat: FlatModel
    theta: torch.Tensor
    curvature: DenseCurvature | MatrixFreeCurvature
    sigma2_hat: np.ndarray
    n_train: int
    n_kept: int
    single_output: bool
    diagnostics: dict = field(default_factory=dict)
    chunk_size: int | None = 256
    vmap_chunk: int | None = 512
    #: (H, H) the training residuals' covariance, sum_i r_i r_i' / dof: its diagonal is sigma2_hat (joint band)
    noise_covariance: np.ndarray | None = None

    @property
    def n_outputs(self) -> int:
        return int(self.sigma2_hat.shape[0])

    def _point_and_forms(self, X, forms) -> tuple[torch.Tensor, torch.Tensor]:
        """(mu(X), forms(G) over the rows), G (m, H, R) the Jacobians, one chunk at a time: bounded memory;
        ``forms`` is the curvature's ``quadratic_forms`` (m, H) or ``cross_forms`` (m, H, H)."""
        X = _as_double(X, self.theta.device)  # where it was fitted, whatever the current device
        with torch.no_grad():
            point = self.flat.forward(self.theta, X)
        parts = []
        for sl in _chunks(X.shape[0], self.chunk_size):
            G = self.flat.jacobian(self.theta, X[sl], chunk_size=None, vmap_chunk=self.vmap_chunk)
            if G.shape[1] != self.n_outputs:
                raise ValueError(f"model returns {G.shape[1]} outputs, fitted with {self.n_outputs}")
            parts.append(forms(G))
        return point, torch.cat(parts)

    def point(self, X) -> np.ndarray:
        """(m, H) mu(X) alone: the forward pass, no Jacobians."""
        with torch.no_grad():
            return self.flat.forward(self.theta, _as_double(X, self.theta.device)).cpu().numpy()

    def predictive_variance(self, X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(point, var_mu, var_total), each (m, H): var_mu = varsigma2 / n, var_total = var_mu + sigma2_hat."""
        point, varsigma2 = self._point_and_forms(X, self.curvature.quadratic_forms)
        var_mu = varsigma2.clamp_min(0.0) / self.n_train
        var_total = var_mu + torch.as_tensor(self.sigma2_hat, device=var_mu.device)[None, :]
        return point.cpu().numpy(), var_mu.cpu().numpy(), var_total.cpu().numpy()

    def predictive_covariance(self, X) -> tuple[np.ndarray, np.ndarray]:
        """(point (m, H), covariance (m, H, H)): G A^{-1} G' / n + S, the asymptotic covariance of the H outputs
        of each row, S the training residuals' covariance (``noise_covariance``; its diagonal is sigma2_hat, so
        the diagonal here is ``var_total`` of :meth:`predictive_variance`)."""
        point, cross = self._point_and_forms(X, self.curvature.cross_forms)
        cov = cross / self.n_train + torch.as_tensor(self.noise_covariance, device=cross.device, dtype=cross.dtype)
        return point.cpu().numpy(), cov.cpu().numpy()

    def predict_joint(self, X, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(point, lower, upper), each (m, H): the simultaneous band mu_h(x) -/+ c(x) sqrt(Sigma_hh(x)), c(x) the
        (1 - alpha) quantile of max_h |Z_h| under the correlation of Sigma(x) (:mod:`pibench.methods.pa.joint_band`):
        joint coverage 1 - alpha under the asymptotics."""
        point, cov = self.predictive_covariance(X)
        c = max_abs_normal_quantiles(correlation(cov), check_alpha(alpha))
        half = c[:, None] * np.sqrt(np.diagonal(cov, axis1=1, axis2=2))
        return point, point - half, point + half

    def critical_value(self, alpha: float) -> float:
        """z_{alpha/(2H)}: Bonferroni over the H outputs."""
        return float(norm.ppf(1.0 - check_alpha(alpha) / (2.0 * self.n_outputs)))

    def predict(self, X, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(point, lower, upper): mu(x) -/+ z_{alpha/(2H)} sqrt(varsigma2(x)/n + sigma2_hat).

        Shapes (m,) when fitted on y of shape (n,), else (m, H).
        """
        z = self.critical_value(alpha)
        point, _, var_total = self.predictive_variance(X)
        half = z * np.sqrt(var_total)
        lower, upper = point - half, point + half
        if self.single_output:
            return point[:, 0], lower[:, 0], upper[:, 0]
        return point, lower, upper


def fit_asymptotic_normal(
    model: torch.nn.Module,
    masks: Mapping[str, torch.Tensor] | None,
    X_train,
    y_train,
    *,
    hessian: HessianKind = "auto",
    max_exact: int = 500,
    eps: float = 1e-8,
    chunk_size: int | None = 256,
    vmap_chunk: int | None = 512,
    dof_offset: int = 0,
    curvature: CurvatureKind = "auto",
    max_matrix_gib: float | None = None,
) -> AsymptoticNormalIntervals:
    """Fit the asymptotic-normal intervals of a trained, sparsified network (see module doc).

    masks: parameter name -> bool tensor (True = kept); None = all kept. y_train is (n,)
    or (n, H); the model maps X (m, ...) to (m,) or (m, H). ``hessian``: "exact"
    (Hessian of l_n), "ggn" (J'J / (n sigma2)), "auto" = exact if R <= max_exact and
    -Hess l_n has no eigenvalue below -eps * lambda_max there, else ggn
    (``diagnostics["exact_not_pd"]``; an explicit "exact" records such eigenvalues in
    ``diagnostics["n_negative"]`` and drops them).
    ``chunk_size`` = training rows per Jacobian/Hessian block, ``vmap_chunk`` = jacrev's
    vectorisation chunk (bounds memory; None = all R at once).
    sigma2_hat uses n - (rank(A) + dof_offset) / H (rank = R when A is nonsingular).
    ``curvature``: "dense" holds the R x R matrices (A, its eigenvectors, its inverse) on the
    current device; "matrix_free" never forms them (GGN products and conjugate gradients,
    :mod:`pibench.methods.pa.curvature`; rank R assumed); "auto" = dense when the matrices fit in
    ``max_matrix_gib`` (default: half the device's free memory), else matrix-free.
    """
    if hessian not in ("auto", "exact", "ggn"):
        raise ValueError(f"hessian must be 'auto', 'exact' or 'ggn', got {hessian!r}")
    if curvature not in ("auto", "dense", "matrix_free"):
        raise ValueError(f"curvature must be 'auto', 'dense' or 'matrix_free', got {curvature!r}")
    X = _as_double(X_train, current_device())
    y = _as_double(y_train, current_device())
    if y.ndim not in (1, 2):
        raise ValueError(f"y_train must be (n,) or (n, H), got shape {tuple(y.shape)}")
    single = y.ndim == 1
    Y = y.reshape(y.shape[0], -1)
    n, H = Y.shape
    if X.shape[0] != n:
        raise ValueError(f"X_train has {X.shape[0]} rows, y_train {n}")

    flat = FlatModel(model, masks)
    R = flat.n_kept
    if R == 0:
        raise ValueError("the model keeps no weights")
    with one_dense_at_a_time(current_device()):
        budget = memory_budget(current_device(), max_matrix_gib)
        dense = curvature == "dense" or (curvature == "auto" and dense_bytes(R) <= budget)
        if curvature == "dense" and dense_bytes(R) > budget:
            raise ValueError(
                f"the model keeps {R} weights: its R x R curvature matrices need {dense_bytes(R) / 2**30:.1f} GiB, "
                f"more than the {budget / 2**30:.3g} GiB allowed on {current_device()}; use curvature = "
                "'matrix_free' (or 'auto'), sparsify more (longer annealing, a wider spike s0_init) or use a smaller "
                "network"
            )
        if not dense and hessian == "exact":
            raise ValueError("the matrix-free curvature uses the Gauss-Newton matrix: give hessian = 'ggn' or "
                             "'auto', or curvature = 'dense'")
        if R + dof_offset >= n * H:
            raise ValueError(
                f"the model keeps too many weights for n: {R} kept weights for n = {n} training rows"
                f"{f' x {H} outputs' if H > 1 else ''} (dof_offset = {dof_offset}): the residual variance has no "
                "degrees of freedom left; use a smaller network (hidden), sparsify more (longer annealing, a wider "
                "spike s0_init) or train on more data"
            )
        theta = flat.theta0
        with torch.no_grad():
            mu = torch.cat([flat.forward(theta, X[sl]) for sl in _chunks(n, chunk_size)])
        if mu.shape != Y.shape:
            raise ValueError(f"model output has shape {tuple(mu.shape)} (as (m, H)), y_train {tuple(Y.shape)}")
        residuals = Y - mu
        rss = residuals.square().sum(0)
        cross = residuals.T @ residuals  # (H, H): its diagonal is rss; over dof, the noise covariance S
        if not bool(torch.all(rss > 0)):
            raise ValueError("zero training residuals: sigma2_hat = 0")
        sigma2_ml = rss / n  # builds A; rescaled below once the rank is known

        if not dense:
            rank = R - flat.structural_nullity()
            dof = n - (rank + dof_offset) / H
            solver = MatrixFreeCurvature(flat.forward, functools.partial(flat.jacobian, chunk_size=None,
                                                                         vmap_chunk=vmap_chunk),
                                         theta, X, sigma2_ml, chunk_size=chunk_size, factor=n / dof)
            return AsymptoticNormalIntervals(
                flat=flat, theta=theta, curvature=solver, sigma2_hat=(rss / dof).cpu().numpy(), n_train=n,
                n_kept=R, single_output=single, chunk_size=chunk_size, vmap_chunk=vmap_chunk,
                noise_covariance=(cross / dof).cpu().numpy(),
                diagnostics={"hessian": "ggn", "curvature": "matrix-free", "exact_not_pd": False, "fallback": None,
                             "rank": rank, "rank_assumed": True, "cg": solver.stats},
            )
        kind = hessian if hessian != "auto" else ("exact" if R <= max_exact else "ggn")
        exact_not_pd = False
        tic = _clock(theta.device)
        if kind == "exact":
            A = -flat.hessian(theta, X, Y, sigma2_ml, chunk_size=chunk_size, vmap_chunk=vmap_chunk)
            if hessian == "auto":
                # Away from an exact optimum, -Hess l_n can have negative eigenvalues (curvature the
                # pseudo-inverse would have to drop), so "auto" switches to the always-PSD
                # Gauss-Newton matrix instead.
                eig = torch.linalg.eigvalsh(A.detach())
                exact_not_pd = bool(eig[0] < -eps * eig[-1])
                if exact_not_pd:
                    kind = "ggn"
                    A = flat.gauss_newton(theta, X, sigma2_ml, chunk_size=chunk_size, vmap_chunk=vmap_chunk)
        else:
            A = flat.gauss_newton(theta, X, sigma2_ml, chunk_size=chunk_size, vmap_chunk=vmap_chunk)
        formed = _clock(theta.device)
        a_inv, info = pseudo_inverse(A.detach(), eps)
        del A  # freed before the lock is let go: the next task sees this memory free
        seconds = {"curvature": formed - tic, "pseudo_inverse": _clock(theta.device) - formed}
        dof = n - (info["rank"] + dof_offset) / H  # > 0: rank <= R < nH - dof_offset
        sigma2 = rss / dof
        a_inv.mul_(n / dof)  # A scales as 1 / sigma2: A(sigma2_hat) = A(RSS/n) * dof / n
    diagnostics = {"hessian": kind, "curvature": "dense", "exact_not_pd": exact_not_pd, **info, "seconds": seconds}
    return AsymptoticNormalIntervals(
        flat=flat, theta=theta, curvature=DenseCurvature(a_inv), sigma2_hat=sigma2.cpu().numpy(), n_train=n,
        n_kept=R, single_output=single, diagnostics=diagnostics, noise_covariance=(cross / dof).cpu().numpy(),
        chunk_size=chunk_size, vmap_chunk=vmap_chunk,
    )
