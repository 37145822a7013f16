"""Numbers in the markdown tables keep their digits whatever the data's scale."""

import re

import numpy as np

from pibench.cli import main
from pibench.reports.summary import format_number


def test_numbers_too_small_for_three_decimals_keep_three_significant_digits():
    shown = [format_number(7.2449e-9), format_number(0.0), format_number(3.14159), format_number(-2e-5, sign="+"),
             format_number(90.254, 2)]
    assert shown == \
        ["7.24e-09", "0.000", "3.142", "-2.00e-05", "90.25"]


def test_a_series_in_nanometres_shows_its_lengths(tmp_path, capsys):
    """Values around 1e-9: the lengths and scores printed 0.000 [0.000, 0.000] while summary.csv had them."""
    y = 1e-9 * (np.cumsum(np.random.default_rng(0).normal(size=500)) * 0.1 + 5)
    path = tmp_path / "tiny.csv"
    path.write_text("y\n" + "".join(f"{v:.6e}\n" for v in y))
    assert main(["run", "--datasets", f"csv:{path}:y", "--methods", "autoreg", "--results-dir", str(tmp_path / "r"),
                 "--no-progress"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "| autoreg |" in line)
    assert "0.000 [0.000" not in row
    assert len(re.findall(r"\d\.\d\de-\d\d \[\d\.\d\de-\d\d, \d\.\d\de-\d\d\]", row)) == 2  # mean length, score
    from pibench import load_results

    assert re.search(r"<td>\d\.\d\de-1\d</td>", load_results(tmp_path / "r")._repr_html_())  # the notebook's table
