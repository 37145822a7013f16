"""`pibench report --html` / `--figures` and `pibench plot` on a store built by real runs; the page in a real
browser."""

import re
import shutil
import textwrap
from html.parser import HTMLParser

import pytest

from pibench.cli import main

SUITE = """
name = "mini"
protocol = { kind = "online", window = 120, retrain_every = 20 }
[[datasets]]
name = "ar"
params = { n_train = 150, n_test = 60 }
[[datasets]]
name = "seasonal_sets"
params = { n_train = 120, n_calibration = 60, n_test = 40, horizon = 3, input_length = 12 }
[[methods]]
name = "aci"
grid = { gamma = [0.0, 0.01, 0.05] }
params = { hidden = 4, epochs = 3, lr = 0.05, batch_size = 20 }
[[methods]]
name = "autoreg"
params = { lags = 2 }
[[methods]]
name = "pa"
setting = "too wide"
params = { hidden = 200, epochs = 2, T1 = 1, T2 = 1, T3 = 2, refine_epochs = 1 }
[[methods]]
name = "cfrnn"
params = { hidden = 4, epochs = 2 }
[[methods]]
name = "dprnn"
params = { hidden = 4, epochs = 2, n_passes = 5 }
"""


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.images, self.references = [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "img":
            self.images.append(attrs.get("src", ""))
        for key in ("src", "href"):
            if key in attrs and not attrs[key].startswith(("data:", "#")):
                self.references.append(attrs[key])


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("store")
    suite = folder / "mini.toml"
    suite.write_text(textwrap.dedent(SUITE))
    results = folder / "results"
    assert main(["run", "--suite", str(suite), "--results-dir", str(results), "--no-progress"]) == 1  # pa fails
    return results


@pytest.fixture(scope="module")
def report(store, tmp_path_factory):
    figures = tmp_path_factory.mktemp("figures")
    assert main(["report", "--results-dir", str(store), "--html", "--figures", str(figures)]) == 0
    return store / "report.html", figures


def test_page_is_self_contained_with_one_image_per_figure(report, capsys):
    html_path, figures = report
    page = Page()
    page.feed(html_path.read_text())
    assert page.references == [] and "script" not in page.tags and "link" not in page.tags
    assert page.images and all(src.startswith("data:image/png;base64,") for src in page.images)
    names = sorted(p.stem for p in figures.glob("*.png"))
    assert sorted(p.stem for p in figures.glob("*.svg")) == names
    assert set(names) == {"tradeoff", "rolling_coverage-mini-ar", "interval_bands-mini-ar", "gamma_sweep-mini-ar",
                          "sets-mini-seasonal_sets", "conditional_coverage-mini-ar", "comparison-mini-ar",
                          "comparison-mini-seasonal_sets"}
    assert len(page.images) == len(names)
    text = html_path.read_text()
    assert all(f'id="{name}"' in text for name in names)


def test_page_itemises_failures_says_what_is_missing_and_has_provenance(report):
    text = report[0].read_text()
    assert "Failed tasks (1)" in text and "too many weights" in text
    assert "Not in this store" in text and "fesp_comparison: needs the fesp suite" in text
    assert "order_selection: needs the ar_order suite" in text
    assert "Provenance" in text and "wall time per task" in text and "package torch" in text
    table = text[text.index("wall time per task"):]  # a task's level is in its row
    head = re.findall(r"<th>([^<]*)</th>", table[:table.index("</thead>")])
    assert head[:6] == ["suite", "dataset", "method", "setting", "alpha", "seed"]
    body = table[table.index("<tbody>"):]
    first_row = re.findall(r"<td>([^<]*)</td>", body[:body.index("</tr>")])
    assert first_row[4] == "0.1"


def test_provenance_says_when_no_git_checkout_ran_and_counts_short_tasks_in_seconds(store):
    """An installed pibench records no git commit: the page said "git commits None"; and a store of tasks of a
    fraction of a second each said "0.0 task-minutes", each task "0.0"."""
    from pibench.benchmarks.store import ResultsStore
    from pibench.reports.figures.results import StoredResults
    from pibench.reports.html import _provenance

    records = [{**r, "git_commit": None, "wall_seconds": 0.012} for r in ResultsStore(store).records()]
    text = _provenance(StoredResults(records, lambda task_id: None), 1.0)
    assert "None" not in text and "- (not run from a git checkout)" in text
    assert f"{0.012 * len(records):.3g} task-seconds" in text and "<td>0.012</td>" in text
    long = _provenance(StoredResults([{**records[0], "wall_seconds": 1234.5}], lambda task_id: None), 1.0)
    assert "<td>1234</td>" in long and "20.6 task-minutes" in long  # not 1.23e+03


def test_set_rows_get_joint_and_per_horizon_tables_in_a_suite_not_named_sets(store, report):
    """The suite here is "mini": its seasonal_sets rows (H = 3) get the joint table, the per-horizon table
    and the sets table, in summary.md and as HTML tables; summary.csv headlines their joint coverage."""
    import pandas as pd

    from pibench.benchmarks.store import ResultsStore

    records = {r["task_id"]: r for r in ResultsStore(store).records() if r.get("per_horizon_coverage")}
    assert {r["method"] for r in records.values()} == {"cfrnn", "dprnn"}
    summary = pd.read_csv(store / "summary.csv").set_index("task_id")
    for task_id, record in records.items():
        row = summary.loc[task_id]
        assert row["coverage"] == pytest.approx(record["joint_coverage"]) and row["coverage_kind"] == "joint"
        assert row["marginal_coverage"] == pytest.approx(record["coverage"])
        assert [row[f"coverage_h{h}"] for h in (1, 2, 3)] == pytest.approx(record["per_horizon_coverage"])
    assert (summary.loc[summary["dataset"] == "ar", "coverage_kind"].dropna() == "marginal").all()

    markdown = (store / "summary.md").read_text()
    headings = ["Sets of sequences: coverage is JOINT", "seasonal_sets (mini): coverage % per horizon, H = 3",
                "Sets of sequences (mini): joint coverage and mean length"]
    assert all(f"### {h}" in markdown for h in headings)
    cfrnn = records[next(t for t, r in records.items() if r["method"] == "cfrnn")]
    # the joint coverage with its 90% CI over the test sequences
    assert f"| mini | seasonal_sets | cfrnn | default | 1 | {100 * cfrnn['joint_coverage']:.2f} [" in markdown
    page = report[0].read_text()
    for heading in headings:
        assert f"<h3>{heading}" in page
    assert "<th>joint coverage %</th><th>marginal coverage %</th><th>worst horizon %</th>" in page
    assert "<th>h1</th><th>h2</th><th>h3</th>" in page


def test_plot_lists_and_draws_one_figure(store, tmp_path, capsys):
    assert main(["plot", "--results-dir", str(store)]) == 0
    listing = capsys.readouterr().out
    assert "tradeoff" in listing and "sets-mini-seasonal_sets" in listing
    lines = listing.splitlines()[1:]  # the captions in one column, whatever the names' lengths (CSV user)
    assert len(lines) > 3 and len({line.index(line.split()[1]) for line in lines}) == 1, lines
    out = tmp_path / "t.svg"
    assert main(["plot", "tradeoff", "--results-dir", str(store), "--out", str(out)]) == 0
    assert out.read_text().lstrip().startswith("<?xml")
    assert main(["plot", "nope", "--results-dir", str(store)]) == 2
    assert "is not in this store" in capsys.readouterr().err
    assert main(["plot", "tradeof", "--results-dir", str(store)]) == 2
    assert "Did you mean 'tradeoff'?" in capsys.readouterr().err
    assert main(["plot", "calibration", "--results-dir", str(store)]) == 2  # one level only: why it is absent
    assert "is not in this store: it needs runs at several miscoverage levels" in capsys.readouterr().err
    assert main(["plot", "tradeoff", "--results-dir", str(store), "--out", str(tmp_path / "t")]) == 0
    assert (tmp_path / "t.png").is_file() and f"wrote {tmp_path / 't.png'}" in capsys.readouterr().out
    # a figure the selection leaves out is said of the selection, not of the store (reader)
    assert main(["plot", "sets", "--results-dir", str(store), "--methods", "aci"]) == 2
    assert "figure 'sets' is not in this selection (methods=['aci']; the whole results dir may have it)" in \
        capsys.readouterr().err


def test_report_on_a_store_of_failures_only(tmp_path, capsys):
    suite = tmp_path / "bad.toml"
    suite.write_text(textwrap.dedent(SUITE.split("[[methods]]")[0] + "[[methods]]" + SUITE.split("[[methods]]")[3]))
    assert main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r"), "--no-progress"]) == 1
    assert main(["report", "--results-dir", str(tmp_path / "r"), "--html"]) == 0
    text = (tmp_path / "r" / "report.html").read_text()
    assert "Figures (0)" in text and "Failed tasks (1)" in text


def browser_or_skip():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium chromium-driver)")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1400,1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=options)


def test_the_page_renders_in_headless_chromium(report, tmp_path):
    html_path, _ = report
    browser = browser_or_skip()
    try:
        browser.get(html_path.resolve().as_uri())
        images = browser.execute_script(
            "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight])")
        errors = [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]
        height = browser.execute_script("return document.body.scrollHeight")
        browser.set_window_size(1400, min(height + 100, 16000))
        shot = tmp_path / "report.png"
        browser.save_screenshot(str(shot))
    finally:
        browser.quit()
    assert len(images) == 8 and all(done and width > 0 and h > 0 for done, width, h in images)
    assert errors == []
    assert shot.stat().st_size > 10_000
