"""Every figure a results store has data for, by name; saving a figure as PNG and SVG.

Names are ``kind`` or ``kind-suite-dataset`` for the figures drawn once per
(suite, dataset), the dataset left out where it repeats the suite's name
(``rolling_coverage-fesp``); ``pibench plot`` and ``pibench report --figures`` use them
as file stems. A store with several miscoverage levels gets each figure once per
level (``tradeoff-alpha0.2``), and the calibration figure across levels. A figure
whose data is not in the store, or that would have nothing to draw, is not listed.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from matplotlib.figure import Figure

from pibench.reports.figures.calibration import calibration_datasets, calibration_figure
from pibench.reports.figures.comparison import comparison_figure, comparison_groups
from pibench.reports.figures.conditional import conditional_datasets, conditional_figure
from pibench.reports.figures.fesp import coverage_by_hour_figure, fesp_paper_figure, gamma_sweep_figure
from pibench.reports.figures.leaderboard import leaderboard_figure, leaderboard_suites
from pibench.reports.figures.order import order_selection_figure
from pibench.reports.figures.overview import tradeoff_figure
from pibench.reports.figures.results import StoredResults
from pibench.reports.figures.sets import set_datasets, sets_figure
from pibench.reports.figures.temporal import (
    interval_bands_figure,
    online_datasets,
    rolling_coverage_drawable,
    rolling_coverage_figure,
)
from pibench.reports.paper_tables import aci_sweep, fesp_comparison, order_selection_comparison

DPI = 130


@dataclass(frozen=True)
class FigureSpec:
    """A figure the store has data for: its name, a one-line caption, and how to draw it."""

    name: str
    caption: str
    draw: Callable[[], Figure | None]


def _slug(kind: str, suite: str | None = None, dataset: str | None = None) -> str:
    """``kind-suite-dataset`` with file-safe parts, the dataset left out where it is the suite's name."""
    kept = [kind, *(p for p in (suite, dataset if dataset != suite else None) if p is not None)]
    return "-".join(re.sub(r"[^A-Za-z0-9_.=]+", "_", p) for p in kept)


def available_figures(results: StoredResults) -> list[FigureSpec]:
    """The figures the store has data for, in report order: one set per miscoverage level (names and
    captions say the level where there are several), then the calibration figure across them."""
    levels = results.alphas
    if len(levels) <= 1:
        return _figures_at_one_level(results)
    specs: list[FigureSpec] = []
    for level in levels:
        for spec in _figures_at_one_level(results.at_alpha(level)):
            specs.append(FigureSpec(f"{spec.name}-alpha{level:g}", f"{spec.caption} alpha = {level:g}.", spec.draw))
    if calibration_datasets(results):
        specs.append(FigureSpec("calibration", "Empirical against nominal coverage across the levels, per method.",
                                lambda: calibration_figure(results)))
    return specs


def _figures_at_one_level(results: StoredResults) -> list[FigureSpec]:
    specs: list[FigureSpec] = []
    summary = results.summary
    for suite in sorted(summary.loc[summary["dataset"] == "fesp", "suite"].unique()):
        if not fesp_comparison(summary, suite).empty:
            specs.append(FigureSpec(_slug("fesp_comparison", suite),
                                    f"The paper's fesp comparison ({suite}): lengths per method, coverage beside.",
                                    partial(fesp_paper_figure, results, suite)))
            specs.append(FigureSpec(_slug("coverage_by_hour", suite), f"fesp coverage per hour of day ({suite}).",
                                    partial(coverage_by_hour_figure, results, suite)))
    if not results.finished().empty:
        specs.append(FigureSpec("tradeoff", "Coverage against mean length, every dataset, method and setting.",
                                lambda: tradeoff_figure(results)))
    for suite, dataset in online_datasets(results):
        if rolling_coverage_drawable(results, suite, dataset):
            specs.append(FigureSpec(_slug("rolling_coverage", suite, dataset),
                                    f"Rolling coverage over the test span, {dataset} ({suite}).",
                                    partial(rolling_coverage_figure, results, suite, dataset)))
        specs.append(FigureSpec(_slug("interval_bands", suite, dataset), f"Intervals and misses, {dataset} ({suite}).",
                                partial(interval_bands_figure, results, suite, dataset)))
        if len(aci_sweep(summary, suite, dataset)) > 1:
            specs.append(FigureSpec(_slug("gamma_sweep", suite, dataset), f"ACI gamma sweep, {dataset} ({suite}).",
                                    partial(gamma_sweep_figure, results, suite, dataset)))
    for suite in leaderboard_suites(summary):
        specs.append(FigureSpec(_slug("leaderboard", suite), f"Leaderboard of {suite}: interval score over the best "
                                                             "covering row, per dataset.",
                                partial(leaderboard_figure, results, suite)))
    for suite, dataset in comparison_groups(results):
        specs.append(FigureSpec(_slug("comparison", suite, dataset),
                                f"Mean interval score against the best row, with CIs and the MCS, {dataset} ({suite}).",
                                partial(comparison_figure, results, suite, dataset)))
    for suite, dataset in conditional_datasets(results):
        specs.append(FigureSpec(_slug("conditional_coverage", suite, dataset),
                                f"Coverage by volatility third, {dataset} ({suite}).",
                                partial(conditional_figure, results, suite, dataset)))
    for suite, dataset in set_datasets(results):
        specs.append(FigureSpec(_slug("sets", suite, dataset), f"Sets of sequences, {dataset} ({suite}).",
                                partial(sets_figure, results, suite, dataset)))
    for suite in sorted(summary["suite"].unique()):
        if not order_selection_comparison(summary, suite).empty:
            specs.append(FigureSpec(_slug("order_selection", suite), f"Order selection per window ({suite}).",
                                    partial(order_selection_figure, results, suite)))
    return specs


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=DPI, metadata={"Date": None} if fmt == "svg" else None)
    return buffer.getvalue()


def save_figure(fig: Figure, folder: str | Path, name: str) -> list[Path]:
    """Write ``name``.png and ``name``.svg under ``folder``; returns their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in ("png", "svg"):
        path = folder / f"{name}.{fmt}"
        path.write_bytes(figure_bytes(fig, fmt))
        paths.append(path)
    return paths


def close(fig: Figure) -> None:
    """Let go of a drawn figure's artists (figures are made outside pyplot: nothing else holds them)."""
    fig.clear()
