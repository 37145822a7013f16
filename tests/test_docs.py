"""The documentation: a short README that links into a site; the site builds offline with --strict (broken
links, missing references and failing examples fail it), renders in a browser, and holds everything the
old 1,100-line README said (moved, not dropped)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_html_report import browser_or_skip

ROOT = Path(__file__).resolve().parents[1]

#: A sentence of each section of the README before the documentation site, and the page it moved to.
MOVED = {
    "It reproduces and\nextends the experiments of Zhang, Sun & Liang": "index.md",
    "`constraints.txt` pins `torch==2.13.0`": "getting-started.md",
    "A rerun skips every finished task, so a killed run resumes where it stopped;": "getting-started.md",
    "Everything installs under the one import name `pibench`": "getting-started.md",
    "`report --html` writes one self-contained page": "guide/figures.md",
    "Every table row carries a 90% CI of": "guide/metrics.md",
    "Overall coverage can look nominal while the": "guide/metrics.md",
    "Every split-conformal online method (aci, agaci, nexcp,": "guide/methods.md",
    "The built-in `regime` dataset has an AR(3) mean whose": "reproductions/regime.md",
    "For set-of-sequences rows (EEG,": "guide/metrics.md",
    "- **Content-addressed.** A task's id hashes its config": "guide/trust.md",
    "A suite is a TOML file (format at the top of `benchmarks/suite.py`": "guide/suites.md",
    "The French electricity suite ([data](../guide/datasets.md); online, 24 hourly series": "reproductions/fesp.md",
    "EnbPI-V2 is about 24% shorter than the paper's at the same coverage": "reproductions/fesp.md",
    "### Beyond the paper: online conformal methods on the same fits": "reproductions/fesp.md",
    "Unlike the regime series, fesp's volatile days are not where coverage falls": "reproductions/fesp.md",
    "`pibench run --suite ar_order --quick -j 2` runs the order-selection study": "reproductions/order-selection.md",
    "29 of the 30 EXPAR fits select exactly lag 1.": "reproductions/order-selection.md",
    "Performance figures (by hand, not in CI)": "architecture.md",
    "Each item is an input sequence and the next H values, predicted jointly": "reproductions/sets.md",
    "**PA-LSTM's joint band**": "reproductions/sets.md",
    "**PA-LSTM given time to anneal**": "reproductions/sets.md",
    "**PA intervals of large networks.**": "guide/gpu.md",
    "Data files are found in `--data-dir DIR`, else `$PIBENCH_DATA`": "guide/datasets.md",
    "`eeg`: control subjects only; each (trial,": "guide/datasets.md",
    "`pibench run --datasets csv:PATH:TARGET` benchmarks the": "tutorials/your-csv.md",
    "# cell 1: a method of your own": "tutorials/notebook-loop.md",
    "What identifies a result is the code that computed it": "tutorials/notebook-loop.md",
    "A method for sets of sequences declares `shape = \"set\"`": "tutorials/set-method.md",
    "Inside pibench, put the module anywhere under `methods/`": "tutorials/series-method.md",
    "The package is typed (`py.typed`) and `register` returns the class": "tutorials/series-method.md",
    "Installed, the four folders are `pibench.data_loaders`": "architecture.md",
    "`mapie_aci` and `mapie_enbpi` run MAPIE 1.6's `TimeSeriesRegressor`": "guide/methods.md",
}


def test_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    for heading in ("## Set up", "## Run", "## Test", "## Reproduced", "## Documentation"):
        assert heading in readme
    for link in ("docs/getting-started.md", "docs/guide/methods.md", "docs/tutorials/notebook-loop.md",
                 "docs/reproductions/fesp.md", "docs/architecture.md", "docs/reference/api.md"):
        assert f"]({link})" in readme and (ROOT / link).is_file(), link


@pytest.mark.parametrize("sentence, page", MOVED.items())
def test_nothing_of_the_old_readme_is_lost(sentence, page):
    assert sentence in (ROOT / "docs" / page).read_text(), (page, sentence)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "DISABLE_MKDOCS_2_WARNING": "true", "NO_MKDOCS_2_WARNING": "1", "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def test_the_site_builds_strictly_with_every_page_and_the_examples_run(site):
    pages = ["index.html", "getting-started.html", "guide/suites.html", "guide/datasets.html", "guide/methods.html",
             "guide/protocols.html", "guide/metrics.html", "guide/trust.html", "guide/figures.html",
             "guide/gpu.html", "guide/cluster.html", "tutorials/series-method.html", "tutorials/set-method.html",
             "tutorials/notebook-loop.html", "tutorials/your-csv.html", "reproductions/fesp.html",
             "reproductions/order-selection.html", "reproductions/sets.html", "reproductions/regime.html",
             "reproductions/realworld.html", "architecture.html", "reference/api.html", "examples/quickstart.html",
             "examples/my_method.html", "examples/my_csv.html"]
    for page in pages:
        assert (site / page).is_file(), page
    # the examples ran: their pages hold what they printed and the figures they drew
    quickstart = (site / "examples" / "quickstart.html").read_text()
    assert "finished task(s)" in quickstart and (site / "examples" / "quickstart-tradeoff.png").stat().st_size > 10_000
    assert "plugin code changed" in (site / "examples" / "my_method.html").read_text()
    # the API reference is generated from the docstrings
    api = (site / "reference" / "api.html").read_text()
    for name in ("pibench.api.run", "pibench.api.Results", "pibench.methods.base.IntervalMethod",
                 "pibench.methods.base.register", "pibench.data_loaders.problems.SeriesData"):
        assert f'id="{name}"' in api, name
    # docstrings' Sphinx roles read as code (":class:TasksFailed" showed 36 times) and no RST table is left
    for page in pages:
        text = (site / page).read_text()
        assert not re.search(r":(class|func|meth|mod|data|attr|exc|obj):<code>", text), page
        assert "====  ====" not in text, page
    assert "<code>TasksFailed</code>" in api


def test_the_site_renders_in_headless_chromium(site):
    browser = browser_or_skip()
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        browser.get((site / "index.html").resolve().as_uri())
        # under load the nav was once read before the page had it (an empty list): wait for it, as below
        WebDriverWait(browser, 60).until(lambda b: b.execute_script(
            "return document.readyState === 'complete' && document.querySelectorAll('nav a').length > 0"))
        nav = browser.execute_script("return Array.from(document.querySelectorAll('nav a')).map(a => a.textContent"
                                     ".trim())")
        browser.get((site / "reference" / "api.html").resolve().as_uri())
        # a loaded machine (CI, two test workers) once read this page's headings before it had them
        WebDriverWait(browser, 60).until(lambda b: b.execute_script(
            "return document.readyState === 'complete' && document.getElementById('pibench.api.run') !== null"))
        entries = browser.execute_script("return Array.from(document.querySelectorAll('.doc-heading')).map(h => h.id)")
        visible = browser.execute_script("const e = document.getElementById('pibench.api.run'); "
                                         "const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0")
        errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    finally:
        browser.quit()
    for title in ("Getting started", "Methods", "The notebook loop", "French electricity prices", "API reference"):
        assert title in nav, (title, nav)
    assert {"pibench.api.run", "pibench.api.Results", "pibench.methods.base.IntervalMethod"} <= set(entries)
    assert visible and errors == []
