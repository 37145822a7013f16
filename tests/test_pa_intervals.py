"""PA asymptotic-normal intervals (docs/guide/methods.md): exact Hessian vs finite differences,
exact reduction to OLS, GGN vs exact, pseudo-inverse fallback (rank-deficient OLS), Bonferroni multi-horizon,
masked weights held at zero."""

import numpy as np
import pytest
import statsmodels.api as sm
import torch
from scipy.stats import norm
from scipy.stats import t as student_t
from torch.func import grad

from pibench.methods.pa.intervals import FlatModel, fit_asymptotic_normal, pseudo_inverse


def tiny_mlp(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1),
                               torch.nn.Flatten(0))


def tiny_masks():
    m0 = torch.ones(3, 2, dtype=torch.bool)
    m0[0, 1] = m0[2, 0] = False
    m2 = torch.tensor([[True, False, True]])
    return {"0.weight": m0, "2.weight": m2}


def mlp_data(n=20, seed=1):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 2, generator=g, dtype=torch.float64)
    y = torch.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.3 * torch.randn(n, generator=g, dtype=torch.float64)
    return X, y


def linear_model(X, y):
    """nn.Linear set to the OLS solution of y (n,) or (n, H) on X."""
    Xc = np.column_stack([np.ones(len(X)), X])
    beta = np.linalg.lstsq(Xc, y, rcond=None)[0]
    beta = beta.reshape(Xc.shape[1], -1)
    lin = torch.nn.Linear(X.shape[1], beta.shape[1]).double()
    with torch.no_grad():
        lin.bias.copy_(torch.from_numpy(beta[0]))
        lin.weight.copy_(torch.from_numpy(beta[1:].T))
    return lin if beta.shape[1] > 1 else torch.nn.Sequential(lin, torch.nn.Flatten(0))


def linear_data(n, p=3, seed=0, noise_sd=(1.0,)):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * np.array([1.0, 2.0, 0.5][:p]) + 0.3
    coefs = rng.normal(size=(p, len(noise_sd)))
    y = 1.5 + X @ coefs + rng.normal(size=(n, len(noise_sd))) * np.array(noise_sd)
    return X, (y[:, 0] if len(noise_sd) == 1 else y)


def test_exact_hessian_matches_finite_differences_of_gradient():
    model, masks = tiny_mlp(), tiny_masks()
    X, y = mlp_data()
    flat = FlatModel(model, masks)
    assert flat.n_kept == (6 + 3 + 3 + 1) - 3
    Y, sigma2 = y[:, None], torch.tensor([0.7], dtype=torch.float64)
    theta = flat.theta0
    hess = flat.hessian(theta, X, Y, sigma2, chunk_size=7)  # several chunks summed
    g = grad(lambda th: flat.log_likelihood(th, X, Y, sigma2))
    h = 1e-5
    fd = torch.stack([(g(theta + h * e) - g(theta - h * e)) / (2 * h)
                      for e in torch.eye(flat.n_kept, dtype=torch.float64)], dim=1)
    assert torch.max(torch.abs(hess - fd)) < 1e-5
    # -Hess l_n = (1/(n sigma2)) sum_i [J_i J_i' - r_i Hess mu_i]: differs from the GGN here
    assert torch.max(torch.abs(hess)) > 1e-3


@pytest.mark.parametrize("hessian", ["exact", "ggn"])
def test_linear_gaussian_reduces_exactly_to_ols(hessian):
    n, x_new = 40, np.array([[0.2, -1.0, 0.5], [3.0, 2.0, -1.0], [0.0, 0.0, 0.0]])
    X, y = linear_data(n)
    fit = fit_asymptotic_normal(linear_model(X, y), None, torch.from_numpy(X), torch.from_numpy(y),
                                hessian=hessian)
    assert fit.n_kept == X.shape[1] + 1
    res = sm.OLS(y, sm.add_constant(X)).fit()
    pred = res.get_prediction(sm.add_constant(x_new, has_constant="add"))
    point, var_mu, var_total = fit.predictive_variance(torch.from_numpy(x_new))
    # sigma2_hat = RSS / (n - R) = statsmodels' scale; var(mu-hat) = varsigma2 / n
    np.testing.assert_allclose(fit.sigma2_hat[0], res.scale, rtol=1e-10)
    np.testing.assert_allclose(point[:, 0], pred.predicted_mean, rtol=1e-10)
    np.testing.assert_allclose(np.sqrt(var_mu[:, 0]), pred.se_mean, rtol=1e-8)
    np.testing.assert_allclose(np.sqrt(var_total[:, 0]), pred.se_obs, rtol=1e-8)
    # the paper's literal reading (§4) would be off by ~3% here: sigma2 = RSS/(n - R - 1) (also in the
    # Hessian, so varsigma2 = n * var_mu * (n - 4)/(n - 5)) and varsigma2/(n - R), R = 4
    paper_literal = res.ssr / (n - 5) + var_mu[:, 0] * n / (n - 5)
    assert np.all(np.abs(paper_literal / pred.se_obs**2 - 1) > 1e-2)


def test_linear_gaussian_bounds_match_statsmodels_large_n():
    X, y = linear_data(20000, seed=3)
    x_new = np.array([[0.2, -1.0, 0.5], [3.0, 2.0, -1.0]])
    fit = fit_asymptotic_normal(linear_model(X, y), None, torch.from_numpy(X), torch.from_numpy(y))
    point, lower, upper = fit.predict(torch.from_numpy(x_new), alpha=0.1)
    assert point.shape == lower.shape == upper.shape == (2,)
    ci = sm.OLS(y, sm.add_constant(X)).fit().get_prediction(
        sm.add_constant(x_new, has_constant="add")).conf_int(obs=True, alpha=0.1)
    np.testing.assert_allclose(lower, ci[:, 0], rtol=1e-3)
    np.testing.assert_allclose(upper, ci[:, 1], rtol=1e-3)


def test_dof_offset_and_too_many_weights():
    X, y = linear_data(40)
    model = linear_model(X, y)
    X_t, y_t = torch.from_numpy(X), torch.from_numpy(y)
    spec = fit_asymptotic_normal(model, None, X_t, y_t, dof_offset=1)
    rss = np.sum((y - model(X_t).detach().numpy()) ** 2)
    np.testing.assert_allclose(spec.sigma2_hat[0], rss / (40 - 4 - 1), rtol=1e-10)
    with pytest.raises(ValueError, match="too many weights"):
        fit_asymptotic_normal(model, None, X_t[:5], y_t[:5], dof_offset=1)


def test_ggn_equals_exact_for_linear_and_differs_for_nonlinear():
    X, y = linear_data(50)
    X_t, Y = torch.from_numpy(X), torch.from_numpy(y)[:, None]
    flat = FlatModel(linear_model(X, y))
    s2 = torch.tensor([1.3], dtype=torch.float64)
    exact = -flat.hessian(flat.theta0, X_t, Y, s2)
    ggn = flat.gauss_newton(flat.theta0, X_t, s2)
    np.testing.assert_allclose(ggn.numpy(), exact.numpy(), rtol=1e-8, atol=1e-12 * exact.abs().max().item())

    Xn, yn = mlp_data()
    flat = FlatModel(tiny_mlp(), tiny_masks())
    residual = yn - flat.forward(flat.theta0, Xn)[:, 0]
    assert residual.abs().max() > 0.1
    exact = -flat.hessian(flat.theta0, Xn, yn[:, None], s2)
    ggn = flat.gauss_newton(flat.theta0, Xn, s2)
    assert torch.max(torch.abs(ggn - exact)) > 1e-3 * torch.max(torch.abs(exact))
    kinds = {h: fit_asymptotic_normal(tiny_mlp(), tiny_masks(), Xn, yn, hessian=h).diagnostics["hessian"]
             for h in ("exact", "ggn")}
    assert kinds == {"exact": "exact", "ggn": "ggn"}
    auto = fit_asymptotic_normal(tiny_mlp(), tiny_masks(), Xn, yn, max_exact=5)
    assert auto.diagnostics["hessian"] == "ggn"


class SumModel(torch.nn.Module):
    """mu = (a + b) x: only a + b is identified, so -Hess is singular."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.3))
        self.b = torch.nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        return (self.a + self.b) * x[:, 0]


@pytest.mark.parametrize("hessian", ["exact", "ggn"])
def test_singular_hessian_pinv_fallback(hessian):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(200, 1))
    y = 0.8 * x[:, 0] + rng.normal(size=200)
    fit = fit_asymptotic_normal(SumModel(), None, torch.from_numpy(x), torch.from_numpy(y), hessian=hessian)
    d = fit.diagnostics
    assert d["fallback"] == "pinv" and d["n_null"] == 1 and d["rank"] == 1 and d["hessian"] == hessian
    assert d["min_eigenvalue"] <= 1e-8 * d["max_eigenvalue"]
    x_new = torch.tensor([[0.5], [-2.0]], dtype=torch.float64)
    point, lower, upper = fit.predict(x_new, alpha=0.1)
    assert np.all(np.isfinite(lower)) and np.all(np.isfinite(upper)) and np.all(lower < point)
    # the gradient lies in the identified direction, so var(mu-hat) = sigma2_hat x0^2 / sum x^2
    _, var_mu, _ = fit.predictive_variance(x_new)
    expected = fit.sigma2_hat[0] * x_new[:, 0].numpy() ** 2 / np.sum(x**2)
    np.testing.assert_allclose(var_mu[:, 0], expected, rtol=1e-6)
    # 1 identified parameter, not 2
    np.testing.assert_allclose(fit.sigma2_hat[0], np.sum((y - 0.8 * x[:, 0]) ** 2) / 199, rtol=1e-6)


def test_pseudo_inverse_is_the_inverse_for_positive_definite():
    inv, info = pseudo_inverse(torch.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=torch.float64))
    assert info["fallback"] is None and info["n_null"] == 0 and info["rank"] == 2
    np.testing.assert_allclose(inv.numpy(), np.linalg.inv([[2.0, 0.5], [0.5, 1.0]]), rtol=1e-12)
    singular = torch.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
    inv, info = pseudo_inverse(singular)
    np.testing.assert_allclose(inv.numpy(), np.linalg.pinv(singular.numpy()), atol=1e-12)
    with pytest.raises(ValueError, match="no positive eigenvalue"):
        pseudo_inverse(torch.zeros(2, 2, dtype=torch.float64))


def test_pseudo_inverse_reads_a_matrix_as_its_symmetric_part_and_gives_a_symmetric_one():
    """A symmetric input is taken as it is (no copy), another as 0.5 (A + A'): the same numbers either way."""
    g = torch.Generator().manual_seed(3)
    M = torch.randn(40, 40, generator=g, dtype=torch.float64)
    skewed = M @ M.T + 1e-3 * torch.randn(40, 40, generator=g, dtype=torch.float64)
    inv, info = pseudo_inverse(skewed)
    assert torch.equal(inv, inv.T)
    again, same = pseudo_inverse(0.5 * (skewed + skewed.T))
    assert torch.equal(inv, again) and info == same
    np.testing.assert_allclose(inv.numpy(), np.linalg.inv(0.5 * (skewed + skewed.T).numpy()), rtol=1e-8)


@pytest.mark.filterwarnings("ignore:The design matrix is rank-deficient")
def test_rank_deficient_linear_model_reproduces_statsmodels_ols_interval():
    """A duplicated column: statsmodels uses pinv and df_resid = n - rank; so does PA's formula."""
    n = 4000
    X, y = linear_data(n, seed=7)
    X = np.column_stack([X, X[:, 0]])  # column 3 duplicates column 0
    Xc = np.column_stack([np.ones(n), X])
    res = sm.OLS(y, Xc).fit()
    assert res.df_resid == n - 4
    lin = torch.nn.Linear(4, 1).double()
    with torch.no_grad():
        lin.bias.fill_(res.params[0])
        lin.weight.copy_(torch.from_numpy(res.params[1:])[None])
    model = torch.nn.Sequential(lin, torch.nn.Flatten(0))
    fit = fit_asymptotic_normal(model, None, torch.from_numpy(X), torch.from_numpy(y), hessian="exact")
    assert fit.diagnostics["fallback"] == "pinv" and fit.diagnostics["rank"] == 4
    X_new = np.array([[0.2, -1.0, 0.4, 0.2], [2.0, 1.0, -1.0, 2.0]])
    _, lower, upper = fit.predict(torch.from_numpy(X_new), alpha=0.1)
    pred = res.get_prediction(np.column_stack([np.ones(2), X_new]))
    frame = pred.summary_frame(alpha=0.1)
    half_t = (frame["obs_ci_upper"] - frame["obs_ci_lower"]).to_numpy() / 2
    # statsmodels uses t quantiles, PA z: compare the standard errors
    t_crit = student_t.ppf(0.95, res.df_resid)
    np.testing.assert_allclose((upper - lower) / 2 / norm.ppf(0.95), half_t / t_crit, rtol=1e-8)


def test_multi_horizon_per_horizon_variance_and_bonferroni():
    n = 20000
    X, y = linear_data(n, seed=5, noise_sd=(1.0, 3.0))
    fit = fit_asymptotic_normal(linear_model(X, y), None, torch.from_numpy(X), torch.from_numpy(y))
    assert fit.n_kept == 2 * 4 and fit.n_outputs == 2
    np.testing.assert_allclose(fit.sigma2_hat, [1.0, 9.0], rtol=0.05)
    x_new = torch.tensor([[0.2, -1.0, 0.5], [3.0, 2.0, -1.0], [1.0, 1.0, 1.0]], dtype=torch.float64)
    point, lower, upper = fit.predict(x_new, alpha=0.1)
    assert point.shape == lower.shape == upper.shape == (3, 2)
    _, var_mu, var_total = fit.predictive_variance(x_new)
    np.testing.assert_allclose((upper - point) / np.sqrt(var_total), norm.ppf(1 - 0.1 / 4), rtol=1e-12)
    np.testing.assert_allclose((point - lower) / np.sqrt(var_total), norm.ppf(1 - 0.025), rtol=1e-12)
    # separate heads of 4 weights each: sigma2_hat_h divides by n - R / H = n - 4, so each horizon's
    # variance is exactly its own OLS predictive variance
    for h in range(2):
        pred = sm.OLS(y[:, h], sm.add_constant(X)).fit().get_prediction(sm.add_constant(x_new.numpy()))
        np.testing.assert_allclose(var_total[:, h], pred.se_obs**2, rtol=1e-8)


def test_pruned_entries_are_fixed_at_zero_and_not_counted():
    X, y = mlp_data(n=30)
    masks = tiny_masks()
    base = tiny_mlp()
    with torch.no_grad():
        for name, p in base.named_parameters():
            if name in masks:
                p.mul_(masks[name])
    fit0 = fit_asymptotic_normal(base, masks, X, y)
    assert fit0.n_kept == sum(p.numel() for p in base.parameters()) - sum(int((~m).sum()) for m in masks.values())

    garbage = tiny_mlp()
    with torch.no_grad():
        for name, p in garbage.named_parameters():
            if name in masks:
                p[~masks[name]] = 5.0
    fit1 = fit_asymptotic_normal(garbage, masks, X, y)
    assert fit1.n_kept == fit0.n_kept
    x_new = torch.randn(4, 2, dtype=torch.float64)
    for a, b in zip(fit0.predict(x_new, 0.1), fit1.predict(x_new, 0.1)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fit0.sigma2_hat, fit1.sigma2_hat, rtol=1e-12)
    # and it differs from keeping every weight (R changes, pruned weights become free)
    full = fit_asymptotic_normal(base, None, X, y)
    assert full.n_kept == fit0.n_kept + 3
    assert not np.allclose(full.predict(x_new, 0.1)[2], fit0.predict(x_new, 0.1)[2])


class TinyRNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.rnn = torch.nn.RNN(1, 4, batch_first=True)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


def test_recurrent_model_both_hessians():
    g = torch.Generator().manual_seed(6)
    X = torch.randn(60, 5, 1, generator=g, dtype=torch.float64)
    y = torch.stack([X[:, -1, 0], X[:, -2, 0]], dim=1) + 0.5 * torch.randn(60, 2, generator=g, dtype=torch.float64)
    model = TinyRNN()
    mask = torch.rand(4, 4, generator=g) > 0.5
    for hessian in ("exact", "ggn"):
        fit = fit_asymptotic_normal(model, {"rnn.weight_hh_l0": mask}, X, y, hessian=hessian, chunk_size=25)
        assert fit.n_kept == sum(p.numel() for p in model.parameters()) - int((~mask).sum())
        point, lower, upper = fit.predict(X[:3], alpha=0.2)
        assert point.shape == (3, 2) and np.all(np.isfinite(upper - lower)) and np.all(upper > lower)


def test_auto_keeps_a_singular_but_psd_exact_hessian_and_leaves_an_indefinite_one():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(200, 1))
    y = 0.8 * x[:, 0] + rng.normal(size=200)
    singular = fit_asymptotic_normal(SumModel(), None, torch.from_numpy(x), torch.from_numpy(y))
    assert singular.diagnostics["hessian"] == "exact" and not singular.diagnostics["exact_not_pd"]
    assert singular.diagnostics["n_null"] == 1 and singular.diagnostics["n_negative"] == 0

    # a tiny tanh MLP away from its optimum: -Hess l_n has clearly negative eigenvalues
    Xn, yn = mlp_data()
    exact = fit_asymptotic_normal(tiny_mlp(), tiny_masks(), Xn, yn, hessian="exact")
    assert exact.diagnostics["n_negative"] >= 1
    auto = fit_asymptotic_normal(tiny_mlp(), tiny_masks(), Xn, yn)
    assert auto.diagnostics["hessian"] == "ggn" and auto.diagnostics["exact_not_pd"]
    assert auto.diagnostics["n_negative"] == 0


def test_refuses_dense_curvature_beyond_the_memory_limit():
    X, y = linear_data(500, seed=1)
    with pytest.raises(ValueError, match=r"keeps 4 weights: its R x R curvature matrices need .* GiB, more than"):
        fit_asymptotic_normal(linear_model(X, y), None, torch.from_numpy(X), torch.from_numpy(y), max_matrix_gib=1e-7,
                              curvature="dense")


def _widths(fit, X):
    _, lower, upper = fit.predict(X, 0.1)
    return upper - lower


def _trained_lstm(seed=0):
    """A small PA-LSTM-shaped network (the sequence network, unrolled) fitted to AR sequences."""
    from pibench.methods.sequence.network import SequenceNet
    from pibench.methods.sequence.train import train_network

    g = torch.Generator().manual_seed(seed)
    x = torch.randn(300, 8, 1, generator=g)
    for t in range(1, 8):
        x[:, t] += 0.7 * x[:, t - 1]
    y = torch.stack([0.7 * x[:, -1, 0], 0.49 * x[:, -1, 0]], dim=1) + 0.3 * torch.randn(300, 2, generator=g)
    torch.manual_seed(seed)
    net = SequenceNet(n_features=1, hidden=3, horizon=2)
    train_network(net, x, y, lambda out, target: ((out - target) ** 2).mean(), epochs=100, lr=0.02, batch_size=40,
                  seed=seed)
    return net.unrolled(), x.double(), y.double()


def _trained_mlp(X, y, masks):
    """tiny_mlp fitted by Adam with its masked weights held at 0 (a sparse network near its optimum)."""
    model = tiny_mlp().double()
    params = dict(model.named_parameters())
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(400):
        opt.zero_grad()
        ((model(X) - y) ** 2).mean().backward()
        opt.step()
        with torch.no_grad():
            for name, mask in masks.items():
                params[name].mul_(mask)
    return model


@pytest.mark.parametrize("case", ["linear", "masked mlp", "lstm, two horizons"])
def test_matrix_free_curvature_equals_the_dense_one(case):
    """Conjugate gradients on Gauss-Newton products (no R x R matrix) give the dense path's widths, on
    models whose curvature the data identify up to the architecture's own null directions (the LSTM's
    two bias vectors): there both paths solve the same system."""
    if case == "linear":
        X, y = (torch.from_numpy(a) for a in linear_data(300, seed=2))
        model, masks, X_test = linear_model(X.numpy(), y.numpy()), None, X[:40]
    elif case == "masked mlp":
        X, y = mlp_data(n=200)
        masks = {"0.weight": torch.tensor([[True, False], [True, True], [False, True]])}
        model, X_test = _trained_mlp(X, y, masks), X[:40] + 0.1
    else:
        model, X, y = _trained_lstm()
        masks, X_test = None, X[:10]
    dense = fit_asymptotic_normal(model, masks, X, y, hessian="ggn", curvature="dense", chunk_size=64)
    free = fit_asymptotic_normal(model, masks, X, y, hessian="ggn", curvature="matrix_free", chunk_size=64)
    assert dense.diagnostics["rank"] == free.diagnostics["rank"] == free.n_kept - free.flat.structural_nullity()
    assert free.diagnostics["curvature"] == "matrix-free" and free.n_kept == dense.n_kept
    np.testing.assert_allclose(free.sigma2_hat, dense.sigma2_hat, rtol=1e-12)
    np.testing.assert_allclose(_widths(free, X_test), _widths(dense, X_test), rtol=1e-4)
    _, var_free, _ = free.predictive_variance(X_test)
    _, var_dense, _ = dense.predictive_variance(X_test)
    np.testing.assert_allclose(var_free, var_dense, rtol=1e-4)  # the parameter term itself, not only the sum
    assert free.diagnostics["cg"]["not_converged"] == 0


def test_structural_nullity_counts_the_twin_biases_kept_in_both():
    model, _, _ = _trained_lstm()
    assert FlatModel(model, None).structural_nullity() == 12  # 4 gates x 3 units
    masks = {"lstm.bias_hh_l0": torch.arange(12) >= 5}
    assert FlatModel(model, masks).structural_nullity() == 7


def test_auto_goes_matrix_free_when_the_dense_matrices_do_not_fit():
    X, y = (torch.from_numpy(a) for a in linear_data(300, seed=3))
    model = linear_model(X.numpy(), y.numpy())
    small = fit_asymptotic_normal(model, None, X, y, max_matrix_gib=1e-7)
    assert small.diagnostics["curvature"] == "matrix-free"
    roomy = fit_asymptotic_normal(model, None, X, y)  # the device's free memory: 4 weights fit
    assert roomy.diagnostics["curvature"] == "dense"
    np.testing.assert_allclose(_widths(small, X[:20]), _widths(roomy, X[:20]), rtol=1e-6)
    with pytest.raises(ValueError, match="Gauss-Newton matrix"):
        fit_asymptotic_normal(model, None, X, y, max_matrix_gib=1e-7, hessian="exact")


def test_the_dense_budget_reads_the_device():
    from pibench.methods.pa.curvature import free_memory_bytes, memory_budget

    free = free_memory_bytes(torch.device("cpu"))
    assert 0 < free < 2**50
    assert abs(memory_budget(torch.device("cpu")) - free // 2) < 2**28  # half the free memory (it moves a little)
    assert memory_budget(torch.device("cpu"), 1.5) == int(1.5 * 2**30)


def test_dense_formation_is_one_process_at_a_time_on_a_shared_lock(tmp_path):
    """The GPU's dense-curvature lock (curvature.exclusive): two processes never hold it at once."""
    import subprocess
    import sys
    script = ("import sys, time; from pathlib import Path; from pibench.methods.pa.curvature import exclusive\n"
              "with exclusive(Path(sys.argv[1])):\n"
              "    t0 = time.time(); time.sleep(1.0); print(t0, time.time())\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "gpu.lock")], stdout=subprocess.PIPE,
                              text=True) for _ in range(2)]
    (a0, a1), (b0, b1) = sorted(tuple(map(float, p.communicate(timeout=60)[0].split())) for p in procs)
    assert a1 <= b0, "both processes held the lock at once"


def test_the_dense_lock_is_nothing_on_the_cpu(tmp_path, monkeypatch):
    from pibench.methods.pa.curvature import one_dense_at_a_time
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    with one_dense_at_a_time(torch.device("cpu")):
        pass
    assert not list(tmp_path.iterdir())
