# %% [markdown]
# # A method of your own
#
# A rolling Gaussian interval, defined here and run beside ACI and the oracle on the default suite's
# AR(1) series; then a second version with a longer window. The second run computes only the new
# method's task and says why: its code changed.

# %%
import numpy as np
from scipy.stats import norm

from pibench import Interval, IntervalMethod, SeriesData, SetData, register, run


@register
class RollingGauss(IntervalMethod):
    """Rolling mean +/- z sd of the last `lookback` steps."""

    name = "rolling_gauss"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, lookback: int = 50):
        super().__init__(alpha=alpha, random_state=random_state)
        self.lookback = lookback

    def fit(self, data: SeriesData, calibration: SetData | None = None) -> "RollingGauss":
        self.history_ = list(data.y[-self.lookback:])
        return self

    def predict_interval(self, X: np.ndarray) -> Interval:
        recent = np.asarray(self.history_[-self.lookback:])
        mean, sd = recent.mean(axis=0), recent.std(axis=0)
        half = norm.ppf(1 - self.alpha / 2) * sd
        return Interval((mean - half)[None], (mean + half)[None], mean[None])

    def update(self, y: np.ndarray) -> None:
        self.history_.append(y[-1])


results = run("default", methods=["rolling_gauss", "aci", "oracle"], quick=True, results_dir="results_mine",
              progress=False)
print(results.summary[["method", "setting", "coverage", "mean_length", "length_ratio_oracle"]].round(3)
      .to_string(index=False))

# %% [markdown]
# Its intervals against the oracle's, by volatility third:

# %%
results.figure("conditional_coverage").savefig("conditional_coverage.png", dpi=90)

# %% [markdown]
# The same method with a longer default window (in a notebook: edit the cell above and run it again).


# %%
@register
class RollingGauss(IntervalMethod):  # noqa: F811  (a re-run cell: the same class, registered again)
    """Rolling mean +/- z sd of the last `lookback` steps."""

    name = "rolling_gauss"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, lookback: int = 200):
        super().__init__(alpha=alpha, random_state=random_state)
        self.lookback = lookback

    def fit(self, data: SeriesData, calibration: SetData | None = None) -> "RollingGauss":
        self.history_ = list(data.y[-self.lookback:])
        return self

    def predict_interval(self, X: np.ndarray) -> Interval:
        recent = np.asarray(self.history_[-self.lookback:])
        mean, sd = recent.mean(axis=0), recent.std(axis=0)
        half = norm.ppf(1 - self.alpha / 2) * sd
        return Interval((mean - half)[None], (mean + half)[None], mean[None])

    def update(self, y: np.ndarray) -> None:
        self.history_.append(y[-1])


again = run("default", methods=["rolling_gauss", "aci", "oracle"], quick=True, results_dir="results_mine",
            progress=False)
print(again.run_report)
print("\n".join(again.run_report.redone))
