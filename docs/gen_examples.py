"""Build the examples' pages when the site is built: each ``examples/*.py`` (jupytext percent format) is run
in a folder of its own, and its page shows its markdown cells as text, its code cells as code, what each code
cell printed, and the figures it saved. An example that fails fails the build (``mkdocs build --strict``).

Run by mkdocs-gen-files (``mkdocs.yml``).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def cells(source: str) -> list[tuple[str, str]]:
    """(kind, text) per cell of a percent-format script: "markdown" (the ``# `` prefixes removed) or "code"."""
    out: list[tuple[str, str]] = []
    kind, lines = None, []
    for line in source.splitlines():
        if line.startswith("# %%"):
            if kind is not None:
                out.append((kind, "\n".join(lines).strip("\n")))
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
            continue
        if kind == "markdown":
            line = line[2:] if line.startswith("# ") else line.lstrip("#")
        lines.append(line)
    if kind is not None:
        out.append((kind, "\n".join(lines).strip("\n")))
    return out


def render(path: Path) -> tuple[str, dict[str, bytes]]:
    """(the page's markdown, {figure file name: PNG bytes}) of running example ``path``."""
    parts, figures = [], {}
    namespace: dict = {"__name__": "__main__"}
    before = Path.cwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            for kind, text in cells(path.read_text()):
                if kind == "markdown":
                    parts.append(text)
                    continue
                parts.append(f"```python\n{text}\n```")
                seen = set(os.listdir(folder))
                printed = io.StringIO()
                with contextlib.redirect_stdout(printed), warnings.catch_warnings(record=True) as warned:
                    warnings.simplefilter("always")
                    exec(compile(text, str(path), "exec"), namespace)
                shown = printed.getvalue().rstrip()
                for w in warned:  # shown on the page, as a notebook shows them
                    shown += f"\n{w.category.__name__}: {w.message}"
                if shown.strip():
                    parts.append(f"```text\n{shown.strip()}\n```")
                for name in sorted(set(os.listdir(folder)) - seen):
                    if name.endswith(".png"):
                        figures[f"{path.stem}-{name}"] = (Path(folder) / name).read_bytes()
                        parts.append(f"![{name}]({path.stem}-{name})")
        finally:
            os.chdir(before)
    return "\n\n".join(parts) + "\n", figures


def write_pages(open_file) -> None:
    """Write every example's page and figures through ``open_file(name, mode)``."""
    for path in sorted(EXAMPLES.glob("*.py")):
        page, figures = render(path)
        with open_file(f"examples/{path.stem}.md", "w") as fh:
            fh.write(page + f"\n_Run from `examples/{path.name}` (jupytext percent format: it opens as a "
                            "notebook) when this site was built._\n")
        for name, data in figures.items():
            with open_file(f"examples/{name}", "wb") as fh:
                fh.write(data)


import mkdocs_gen_files  # noqa: E402  (this script runs inside mkdocs-gen-files)

write_pages(mkdocs_gen_files.open)
