"""The layering of DESIGN.md, checked on the source: data_loaders <- methods <- benchmarks / reports, no cycles."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("data_loaders", "methods", "benchmarks", "reports")


def module_name(path: Path) -> str:
    """The import name of a source file: ``methods/aci.py`` -> ``pibench.methods.aci``."""
    parts = ["pibench", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_imports() -> dict[str, set[str]]:
    """module -> the project modules it imports anywhere in its body (lazy imports included)."""
    files = {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    # the import name's own modules (the API, the command line), not the linked folders beside them
    files.update({("pibench" if p.stem == "__init__" else f"pibench.{p.stem}"): p
                  for p in (ROOT / "pibench").glob("*.py")})
    graph = {}
    for name, path in files.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                candidates = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                candidates = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            targets |= {c for c in candidates if c in files and c != name}
        graph[name] = targets
    return graph


def test_the_project_imports_form_no_cycle():
    graph = project_imports()
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])


@pytest.mark.parametrize("package, forbidden", [
    ("benchmarks", ("api", "cli")),  # the command line and the Python API sit above everything they use
    ("methods", ("api", "cli")),
    ("reports", ("api", "cli")),
    ("data_loaders", ("methods", "benchmarks", "reports")),
    ("methods", ("benchmarks", "reports", "methods.catalog")),
    ("reports", ("benchmarks",)),
])
def test_lower_layers_do_not_import_upper_ones(package, forbidden):
    graph = project_imports()
    package, forbidden = f"pibench.{package}", [f"pibench.{f}" for f in forbidden]
    offenders = sorted(f"{m} imports {t}" for m, targets in graph.items()
                       if (m == package or m.startswith(package + ".")) and m != "pibench.methods.catalog"
                       for t in targets if any(t == f or t.startswith(f + ".") for f in forbidden))
    assert not offenders, offenders


def test_every_builtin_method_module_is_discovered_without_a_list():
    from pibench.methods.base import IntervalMethod
    from pibench.methods.catalog import available_methods

    defined = set()
    for path in (ROOT / "methods").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                    isinstance(d, ast.Name) and d.id == "register" for d in node.decorator_list):
                defined.add(node.name)
    found = {cls.__name__ for cls in available_methods().values() if issubclass(cls, IntervalMethod)}
    assert defined and defined <= found


def test_project_code_imports_through_the_pibench_name():
    """Installed, the packages exist only as pibench.*: a bare `from methods...` would import whatever
    `methods` the user's path holds."""
    bare = []
    for folder in (*PACKAGES, "tests", "pibench"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                bare += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in PACKAGES]
    assert not bare, bare
