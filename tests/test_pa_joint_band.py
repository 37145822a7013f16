"""PA's simultaneous band over H horizons: the max-|Z| critical value, and joint coverage on data whose
multi-horizon errors are correlated (issue 22)."""

import numpy as np
import pytest
import torch
from scipy.stats import norm

from pibench.methods.pa.intervals import fit_asymptotic_normal
from pibench.methods.pa.joint_band import correlation, max_abs_normal_quantiles


def test_the_critical_value_at_independence_and_at_full_correlation():
    """Independent outputs: Sidak's z_{(1 + (1 - alpha)^{1/H}) / 2}; identical outputs: z_{1 - alpha/2}
    (Monte Carlo with 20,000 draws: a quantile error near 0.01)."""
    H, alpha = 6, 0.1
    independent, identical = np.eye(H), np.ones((H, H))
    c = max_abs_normal_quantiles(np.stack([independent, identical]), alpha)
    assert c[0] == pytest.approx(norm.ppf((1 + (1 - alpha) ** (1 / H)) / 2), abs=0.03)
    assert c[1] == pytest.approx(norm.ppf(1 - alpha / 2), abs=0.03)
    assert c[1] < c[0] < norm.ppf(1 - alpha / (2 * H))  # Bonferroni is the widest
    assert np.array_equal(max_abs_normal_quantiles(np.stack([independent]), alpha), c[:1])  # common draws


def test_correlation_of_a_covariance():
    cov = np.array([[[4.0, 2.0], [2.0, 9.0]]])
    np.testing.assert_allclose(correlation(cov), [[[1.0, 1 / 3], [1 / 3, 1.0]]])


def test_the_joint_band_covers_at_its_level_where_bonferroni_over_covers():
    """Linear model, H = 5 outputs, noise with the correlation of an AR(1)'s multi-step errors (known law).
    On 10,000 test points: joint coverage within 1.5 points of 90% (standard error 0.3), Bonferroni's
    above it and wider."""
    rng = np.random.default_rng(0)
    n, m, p, H = 2000, 10000, 3, 5
    # errors e_h = sum_{j<=h} 0.8^(h-j) eta_j: strongly correlated across horizons
    mix = np.array([[0.8 ** (h - j) if j <= h else 0.0 for j in range(H)] for h in range(H)])
    beta = rng.normal(size=(p, H))

    def draw(k):
        x = rng.normal(size=(k, p))
        return x, x @ beta + rng.normal(size=(k, H)) @ mix.T

    x, y = draw(n)
    model = torch.nn.Linear(p, H).double()
    with torch.no_grad():  # the least-squares fit, as training would end
        design = np.c_[x, np.ones(n)]
        coef = np.linalg.lstsq(design, y, rcond=None)[0]
        model.weight.copy_(torch.as_tensor(coef[:p].T))
        model.bias.copy_(torch.as_tensor(coef[p]))
    fitted = fit_asymptotic_normal(model, None, torch.as_tensor(x), torch.as_tensor(y), hessian="ggn",
                                   curvature="dense")
    x_test, y_test = draw(m)
    _, lower, upper = fitted.predict_joint(torch.as_tensor(x_test), 0.1)
    _, b_lower, b_upper = fitted.predict(torch.as_tensor(x_test), 0.1)
    joint = np.all((lower <= y_test) & (y_test <= upper), axis=1).mean()
    bonferroni = np.all((b_lower <= y_test) & (y_test <= b_upper), axis=1).mean()
    assert abs(joint - 0.9) <= 0.015
    assert bonferroni > joint + 0.01  # measured about 0.94 against 0.90
    assert np.all(upper - lower < b_upper - b_lower)
    # the covariance's diagonal is the variance the Bonferroni band uses
    _, _, var_total = fitted.predictive_variance(torch.as_tensor(x_test[:50]))
    _, cov = fitted.predictive_covariance(torch.as_tensor(x_test[:50]))
    np.testing.assert_allclose(np.diagonal(cov, axis1=1, axis2=2), var_total, rtol=1e-10)
    # the noise covariance is the residuals' (its diagonal sigma2_hat), close to the true one
    np.testing.assert_allclose(np.diag(fitted.noise_covariance), fitted.sigma2_hat, rtol=1e-12)
    np.testing.assert_allclose(fitted.noise_covariance, mix @ mix.T, atol=0.15)
