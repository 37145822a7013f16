"""mkdocs hook: the Sphinx roles of pibench's docstrings (:class:`X`, :func:`~pibench.a.f`) read as code on
the site, as Sphinx shows them: the name as written, or its last part after a ``~``."""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):<code>(~?)([^<]+)</code>")


def _as_code(match: re.Match) -> str:
    name = match.group(2).rsplit(".", 1)[-1] if match.group(1) else match.group(2)
    return f"<code>{name}</code>"


def on_page_content(html: str, **_) -> str:
    return _ROLE.sub(_as_code, html)
