# %% [markdown]
# # Quick start
#
# The default suite's quick variant on built-in synthetic data (an AR(1) series, no download): ACI,
# the online conformal methods beyond the paper, AutoReg and the oracle. About 10 seconds on 2 cores.
# (This file is in jupytext's percent format: `jupytext --to notebook quickstart.py` makes it a notebook.)

# %%
from pibench import run

results = run("default", quick=True, results_dir="results_quickstart", progress=False)
print(results)

# %% [markdown]
# One row per task: coverage, lengths, the interval score, each with its 90% CI in
# `summary.csv`, and where the intervals fail (coverage by volatility third).

# %%
table = results.summary[["method", "setting", "coverage", "coverage_ci_low", "coverage_ci_high", "mean_length",
                         "winkler", "length_ratio_oracle"]]
print(table.round(3).to_string(index=False))

# %% [markdown]
# Is the difference real? Each method against the best row on the interval score (Diebold-Mariano),
# and which rows are in the 90% Model Confidence Set, with their MCS p-values.

# %%
comparison = results.compare()
print(comparison[["method", "setting", "mean_loss", "difference", "dm_p", "in_mcs", "mcs_p"]].round(3)
      .to_string(index=False))

# %% [markdown]
# Figures are drawn from the stored predictions only.

# %%
results.figure("tradeoff").savefig("tradeoff.png", dpi=90)
results.figure("conditional_coverage").savefig("conditional_coverage.png", dpi=90)
