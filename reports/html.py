"""The self-contained HTML report: tables, every figure the store has data for, failures, provenance.

One file, no network: styles inline, figures as base64 PNG data URIs (their SVG
twins are written by ``--figures``). The tables are the markdown of ``pibench
report`` turned into HTML by :func:`markdown_to_html`, which knows the little
markdown pibench writes: ``###`` headings, pipe tables, ``- `` lists and
paragraphs.
"""

from __future__ import annotations

import base64
import html
import platform
import time
from collections import Counter
from datetime import UTC, datetime

import pandas as pd

from pibench.reports.figures.catalog import available_figures, close, figure_bytes
from pibench.reports.figures.results import StoredResults
from pibench.reports.summary import plugin_code

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1400px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { margin-top: 1.5em; }
table { border-collapse: collapse; font-size: 0.82em; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; white-space: nowrap; }
th { background: #f2f2f2; } td:first-child, th:first-child { text-align: left; } td.wrap { white-space: normal; }
.scroll { overflow-x: auto; } figure { margin: 1.5em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #555; } .muted { color: #666; font-size: 0.9em; }
details { margin: 1em 0; }
"""

#: What each kind of figure needs, said when the store has none of it.
NEEDS = {
    "fesp_comparison": "the fesp suite (pibench run --suite fesp)",
    "tradeoff": "any finished task",
    "rolling_coverage": "an online series suite (the default suite, fesp)",
    "sets": "set-of-sequences runs in any suite (seasonal_sets, eeg, covid, mimic or csv_sets data; "
            "e.g. pibench run --suite sets)",
    "order_selection": "the ar_order suite (pibench run --suite ar_order)",
    "conditional_coverage": "a series run by this version (coverage by volatility third; e.g. pibench run)",
    "comparison": "two or more finished rows on one dataset",
    "leaderboard": "a suite with series rows on two or more datasets (e.g. pibench run --suite realworld)",
    "calibration": "runs at several miscoverage levels (e.g. pibench run --alpha 0.05 0.1 0.2)",
}


def _cells(line: str) -> list[str]:
    return [html.escape(c.strip()) for c in line.strip().strip("|").split("|")]


def markdown_to_html(text: str) -> str:
    """The markdown pibench writes (headings, pipe tables, bullet lists, paragraphs) as HTML."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|") and i + 1 < len(lines) and set(lines[i + 1].replace("|", "")) <= {"-", " "}:
            rows = [f"<tr>{''.join(f'<th>{c}</th>' for c in _cells(line))}</tr>"]
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(f"<tr>{''.join(f'<td>{c}</td>' for c in _cells(lines[i]))}</tr>")
                i += 1
            out.append('<div class="scroll"><table>' + "".join(rows) + "</table></div>")  # wide: scrolls alone
            continue
        if line.startswith("#"):
            level = min(len(line) - len(line.lstrip("#")), 4)
            out.append(f"<h{level}>{html.escape(line.lstrip('#').strip())}</h{level}>")
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{html.escape(lines[i][2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
            continue
        elif line.strip():
            out.append(f"<p>{html.escape(line.strip().strip('_'))}</p>")
        i += 1
    return "\n".join(out)


def _provenance(results: StoredResults, wall_seconds: float) -> str:
    records = results.records
    versions = Counter(tuple(sorted((r.get("versions") or {}).items())) for r in records)
    packages = dict(versions.most_common(1)[0][0]) if versions else {}
    starts = sorted(r["started_at"] for r in records if r.get("started_at"))
    facts = {
        "report written": datetime.now(UTC).isoformat(timespec="seconds"),
        "report built in": f"{wall_seconds:.1f} s on {platform.node()}",
        "tasks ran": f"{starts[0]} to {starts[-1]}" if starts else "-",
        "code versions": ", ".join(sorted({r["identity"].get("code", "?") for r in records})),
        "plugin code": ", ".join(sorted({p for p in map(plugin_code, records) if p})) or "-",
        "git commits": ", ".join(sorted({str(r["git_commit"]) for r in records if r.get("git_commit")}))
        or "- (not run from a git checkout)",
        "hosts": ", ".join(sorted({str(r.get("host")) for r in records})),
        "python": ", ".join(sorted({str(r.get("python")) for r in records})),
        **{f"package {k}": str(v) for k, v in packages.items()},
    }
    rows = "".join(f"<tr><td>{html.escape(k)}</td><td class=\"wrap\">{html.escape(v)}</td></tr>"
                   for k, v in facts.items())  # long lists wrap; a table's "90.25 [88.98, 91.52]" does not
    tasks = pd.DataFrame([{k: r.get(k) for k in ("suite", "dataset", "method", "setting", "alpha", "seed", "status",
                                                  "wall_seconds", "host", "task_id")} for r in records])
    tasks = tasks.sort_values(["suite", "dataset", "method", "setting", "alpha", "seed"])
    tasks["wall_seconds"] = tasks["wall_seconds"].map(lambda s: "-" if pd.isna(s) else f"{s:.3g}" if s < 100
                                                      else f"{s:.0f}")  # 0.012, 4.21, 1234 (not 1.23e+03)
    ahead = ", without the shared base fits computed ahead of them" if any(
        r.get("shared_base_fits") for r in records) else ""
    total = sum(float(r.get("wall_seconds") or 0) for r in records)
    spent = f"{total / 60:.1f} task-minutes" if total >= 60 else f"{total:.3g} task-seconds"
    return (f"<table>{rows}</table><details><summary>wall time per task ({len(tasks)} tasks, "
            f"{spent}{ahead})</summary>"
            f"{tasks.to_html(index=False, border=0, escape=True)}</details>")


def build_report(results: StoredResults, tables_markdown: str, title: str = "pibench report",
                 progress=None) -> tuple[str, list[str]]:
    """(the HTML page, the names of the figures it embeds)."""
    tic = time.perf_counter()
    specs = available_figures(results)
    parts, names = [], []
    for spec in specs:
        fig = spec.draw()
        if fig is None:
            continue
        png = base64.b64encode(figure_bytes(fig, "png")).decode()
        close(fig)
        names.append(spec.name)
        parts.append(f'<figure id="{spec.name}"><img alt="{html.escape(spec.caption)}" '
                     f'src="data:image/png;base64,{png}"><figcaption>{html.escape(spec.name)}: '
                     f"{html.escape(spec.caption)}</figcaption></figure>")
        if progress:
            progress(spec.name)
    present = {name.split("-")[0] for name in names}
    missing = [f"<li>{html.escape(kind)}: needs {html.escape(need)}</li>" for kind, need in NEEDS.items()
               if kind not in present]
    body = [f"<h1>{html.escape(title)}</h1>",
            f'<p class="muted">{len(results.records)} task record(s); figures from the stored records and '
            "predictions only. Nominal coverage is drawn as a dashed line; for sets of sequences the tables "
            "headline joint coverage (all horizons of a sequence covered) and the per-horizon panels draw the "
            "Bonferroni per-horizon target 1 - alpha/H.</p>",
            "<h2>Tables</h2>", markdown_to_html(tables_markdown),
            f"<h2>Figures ({len(names)})</h2>", *parts]
    if missing:
        body += ["<h2>Not in this store</h2><ul>", *missing, "</ul>"]
    body += ["<h2>Provenance</h2>", _provenance(results, time.perf_counter() - tic)]
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
    return page, names
