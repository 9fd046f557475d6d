"""The layers hold: no import cycles, a pure core, and a lazy ``opgov --help``.

The import graph is read from the source with :mod:`ast`, function-level imports included, so a
cycle cannot hide inside a function body.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import opgov

PACKAGE = Path(opgov.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path) -> list[tuple[str, int]]:
    """Every module ``name`` imports (absolute names), with the line, at any depth of the file.
    Imports under ``if TYPE_CHECKING:`` are left out: they name types for annotations and never
    run, so they make no dependency (a renderer may name the result type it renders)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    typing_only = {id(inner) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for stmt in node.body for inner in ast.walk(stmt)}
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((module, node.lineno))
            # ``from opgov.core import compat`` imports the submodule opgov.core.compat
            found += [(f"{module}.{alias.name}", node.lineno) for alias in node.names
                      if f"{module}.{alias.name}" in MODULES]
    return found


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        targets = set()
        for module, _ in _imports(name, path):
            # importing a.b.c runs a/__init__ and a/b/__init__ as well, but those are part of the
            # package's own structure; an edge goes to the most specific opgov module named
            while module and module not in MODULES:
                module = module.rpartition(".")[0]
            if module.startswith("opgov") and module != name and module != "opgov":
                targets.add(module)
        graph[name] = targets
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_function_level_imports():
    # commands import their services inside the command function (start-up stays lazy)
    assert "opgov.services.decompositions" in _graph()["opgov.cli.commands_decomps"]
    assert "opgov.render.decomps" in _graph()["opgov.render.decomps_text"]


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_the_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_core_imports_only_the_standard_library_and_itself():
    outside = []
    for name, path in MODULES.items():
        if not name.startswith("opgov.core"):
            continue
        for module, line in _imports(name, path):
            top = module.partition(".")[0]
            if module.startswith("opgov.core") or (top != "opgov" and top in sys.stdlib_module_names):
                continue
            outside.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {module}")
    assert outside == []


LAYERS = ["core", "formats", "results", "render", "db", "services", "api", "web", "cli"]
"""Each layer may import the ones before it, never one after it (``render`` and ``formats`` are
both adapters around the core; ``db`` knows nothing of files or renderings)."""
ALLOWED = {
    "core": {"core"},
    "formats": {"core", "formats"},
    "results": {"core", "results"},
    "render": {"core", "results", "render"},
    "db": {"core", "db"},
    "services": {"core", "formats", "results", "render", "db", "services"},
    "api": {"core", "formats", "results", "render", "db", "services", "api", "web"},
    "web": {"core", "formats", "results", "render", "db", "services", "api", "web"},
    "cli": set(LAYERS),
}


def test_layers_import_only_the_layers_below():
    wrong = []
    for name, targets in _graph().items():
        layer = name.split(".")[1] if name.count(".") >= 1 else ""
        if layer not in ALLOWED:
            continue
        for target in targets:
            other = target.split(".")[1]
            if other in LAYERS and other not in ALLOWED[layer]:
                wrong.append(f"{name} → {target}")
    assert sorted(wrong) == []


HEAVY = ("sqlalchemy", "yaml", "rich", "pydantic", "jinja2", "alembic", "fastapi")


def _loaded_by(args: list[str]) -> set[str]:
    """The top-level modules a fresh ``opgov ARGS`` process has imported when it is done."""
    code = ("import json, sys\nfrom opgov.cli.main import run\n"
            f"try:\n    run({args!r})\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(json.dumps(sorted(sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={"PATH": "/usr/bin:/bin", "COLUMNS": "100"})
    assert "Usage" in proc.stdout
    return {m.partition(".")[0] for m in json.loads(proc.stderr.strip().splitlines()[-1])}


def test_help_imports_nothing_heavy():
    assert sorted(_loaded_by(["--help"]) & set(HEAVY)) == []


@pytest.mark.parametrize("args", [["check-bc", "--help"], ["opset", "build", "--help"], ["report", "--help"]])
def test_a_command_help_imports_only_what_renders_help(args):
    # typer renders a command's help with rich when it is installed; nothing else is needed
    assert sorted(_loaded_by(args) & set(HEAVY)) in ([], ["rich"])
