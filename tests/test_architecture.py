"""The layers hold: every module of opgov/ sits in a layer, imports only what its layer may, no
import cycles, a pure core, and a lazy ``opgov --help``.

The imports are read from the source with :mod:`ast`: module-level ones, those inside a function
body and those under ``if TYPE_CHECKING:`` alike (a type-only import still says which layer knows
which), relative ones resolved. The table below is the layer picture of docs/architecture.md,
which holds it verbatim (``PYTHONPATH=. python tests/test_architecture.py`` rewrites it there).
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import opgov

PACKAGE = Path(opgov.__file__).resolve().parent
DOC = PACKAGE.parent / "docs" / "architecture.md"

# Every layer (a folder of opgov/, or a module at its top) and the other layers it may import,
# bottom to top. A layer always imports itself; nothing not listed here is allowed.
ROOT = {"opgov", "resources"}
BELOW_SERVICES = {"core", "formats", "db", "results", "render", "reads", "services"} | ROOT
LAYERS: dict[str, tuple[str, set[str]]] = {
    "opgov": ("`opgov/__init__.py`: the version", set()),
    "resources": ("`opgov/resources.py`: where the migrations and the shipped data files are", set()),
    "core": ("`opgov/core/`: pure decisions, standard library only", set()),
    "formats": ("`opgov/formats/`: files in and out", {"core"} | ROOT),
    "db": ("`opgov/db/`: tables, ORM classes, the engine", {"core"} | ROOT),
    "results": ("`opgov/results/`: every use case's result, declared once as a frozen standard-library "
                "dataclass", {"core"} | ROOT),
    "render": ("`opgov/render/`: text, Markdown, GitHub, JSON, HTML of results", {"core", "results"} | ROOT),
    "reads": ("`opgov/reads/`: the reads services and pages share (the `Ctx`, settings, lookups, rules, torch's "
              "facts, the runtimes, the model corpus), no writes", {"core", "formats", "db", "results"} | ROOT),
    "services": ("`opgov/services/`: one function per use case", BELOW_SERVICES - {"services"}),
    "usecases": ("`opgov/usecases/`: each use case declared once (request, result, service, method and path); "
                 "its requests' fields; the client that calls one in-process or over HTTP (`client.py`)",
                 BELOW_SERVICES),
    "web": ("`opgov/web/`: the pages' renderer and `site build`, no SQL",
            {"core", "results", "render", "reads", "usecases"} | ROOT),
    "export_check": ("`opgov/export_check.py`: the torch.export users' entry point (the use case `export-check`)",
                     BELOW_SERVICES | {"usecases"}),
    "api": ("`opgov/api/`: entrypoint, FastAPI (`opgov serve`) and the pages' routes",
            BELOW_SERVICES | {"web", "usecases"}),
    "cli": ("`opgov/cli/`: entrypoint, Typer", BELOW_SERVICES | {"web", "usecases"}),
    "__main__": ("`opgov/__main__.py`: `python -m opgov`", {"cli"}),
}

# Third-party libraries only some layers may import (core imports none: standard library only).
CONFINED = {
    "sqlalchemy": {"db", "reads", "services"},
    "alembic": {"db", "services"},
    "psycopg": {"db"},
    "fastapi": {"api"},
    "starlette": {"api"},
    "swagger_ui_bundle": {"api"},
    "uvicorn": {"cli"},
    "typer": {"cli"},
    "rich": {"cli"},
    "jinja2": {"render", "web"},
    "markupsafe": {"render", "web"},
    "torch": {"formats"},
}

# What the code does today against the table, each named with why it stays for now. The test
# fails on any other violation and on an exception that no longer happens.
EXCEPTIONS = {
    ("opgov.cli.commands_serve", "opgov.api.config"):
        "`opgov serve` checks the server's OPGOV_* settings once before uvicorn starts the workers",
    ("opgov.api.deps", "sqlalchemy"):
        "`orm_session` opens an ORM session inside a read's Core transaction (no SQL)",
}


def _parse(path: Path) -> ast.Module:
    """The module's syntax tree (read only: a copy's unchanged files share the original's)."""
    return _parse_text(path.read_text(encoding="utf-8"))


@functools.cache
def _parse_text(text: str) -> ast.Module:
    return ast.parse(text)


def _module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(package: Path) -> dict[str, Path]:
    return {_module_name(p, package): p for p in sorted(package.rglob("*.py"))}


MODULES = _modules(PACKAGE)


@dataclass(frozen=True)
class Import:
    module: str  # absolute name, as written (``opgov.core.schema``, ``sqlalchemy.orm``)
    line: int
    typing_only: bool  # under ``if TYPE_CHECKING:``


def _imports(name: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """Every module ``name`` imports, with its line, at any depth of the file."""
    tree = _parse(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    typing_only = {id(inner) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for stmt in node.body for inner in ast.walk(stmt)}
    found: list[Import] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # ``from opgov.core import compat`` imports the submodule opgov.core.compat
            names = [f"{module}.{alias.name}" for alias in node.names if f"{module}.{alias.name}" in modules]
            if len(names) < len(node.names):  # and names defined in the module itself
                names.insert(0, module)
        found += [Import(n, node.lineno, id(node) in typing_only) for n in names]
    return found


def _target(module: str, modules: dict[str, Path]) -> str:
    """The most specific opgov module an import names (importing a.b.c runs a/__init__ and
    a/b/__init__ too, but those are the package's own structure)."""
    while module and module not in modules:
        module = module.rpartition(".")[0]
    return module


def layer_of(module: str) -> str:
    """``opgov.api.routers.checks`` → ``api``; ``opgov.export_check`` → ``export_check``;
    ``opgov`` → ``opgov``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _graph(package: Path = PACKAGE, *, typing: bool = False) -> dict[str, set[str]]:
    """Module → the opgov modules it imports (type-only imports with ``typing``)."""
    modules = _modules(package)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = {_target(i.module, modules) for i in _imports(name, path, modules)
                   if i.module.partition(".")[0] == "opgov" and (typing or not i.typing_only)}
        graph[name] = {t for t in targets if t not in (name, "")}
    return graph


@dataclass(frozen=True)
class Violation:
    file: str  # relative to the folder holding the package
    line: int
    importer: str
    imported: str  # an opgov module, or a third-party top-level name
    why: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.importer} → {self.imported} ({self.why})"


def violations(package: Path = PACKAGE) -> list[Violation]:
    """Every import, type-only and function-level ones included, that the layer table forbids."""
    modules = _modules(package)
    found = []
    for name, path in modules.items():
        layer = layer_of(name)
        where = str(path.relative_to(package.parent))
        for i in _imports(name, path, modules):
            top = i.module.partition(".")[0]
            if top == "opgov":
                target = _target(i.module, modules)
                other = layer_of(target)
                if other != layer and other not in LAYERS.get(layer, ("", set()))[1]:
                    found.append(Violation(where, i.line, name, target, f"{layer} may not import {other}"))
            elif top in sys.stdlib_module_names or top == "__future__":
                continue
            elif layer == "core":
                found.append(Violation(where, i.line, name, top, "core imports the standard library only"))
            elif top in CONFINED and layer not in CONFINED[top]:
                found.append(Violation(where, i.line, name, top,
                                       f"{top} only in {', '.join(sorted(CONFINED[top]))}"))
    return sorted(found, key=lambda v: (v.file, v.line, v.imported))


def test_every_module_is_in_a_layer():
    # a new folder or top-level module of opgov/ is placed in the table before it is imported
    assert sorted({layer_of(name) for name in MODULES} - set(LAYERS)) == []
    assert sorted(set(LAYERS) - {layer_of(name) for name in MODULES}) == []


def test_layers_import_only_what_the_table_allows():
    found = violations()
    unexplained = [str(v) for v in found if (v.importer, v.imported) not in EXCEPTIONS]
    gone = sorted(set(EXCEPTIONS) - {(v.importer, v.imported) for v in found})
    assert unexplained == []
    assert gone == [], "fixed: remove these from EXCEPTIONS (and regenerate docs/architecture.md)"


def declaration_references(use_case) -> list[tuple[str, str]]:
    """What a use case's declaration names, as (what, the opgov module defining it): its request,
    every class of its result (``list[A]``, ``A | B``) and its service, a ``lazy`` one imported now
    (a reference that does not resolve fails here, not when a user first asks it)."""
    import typing

    from opgov.usecases.declaration import Lazy

    def leaves(kind):
        args = typing.get_args(kind)
        return [leaf for arg in args for leaf in leaves(arg)] if args else [kind]

    found = [("request", use_case.request.__module__)] if use_case.request is not None else []
    found += [("result", kind.__module__) for kind in leaves(use_case.result)]
    service = use_case.service
    if isinstance(service, Lazy):
        assert callable(service.load()), f"{use_case.name}: {service!r} is not a function"
        found.append(("service", service.module))
    else:
        found.append(("service", service.__module__))
    return found


def upward_references(use_cases) -> list[str]:
    """Each reference of a declaration to a layer usecases/ may not import (api/, cli/, web/ are above
    it), as ``name: what → module``."""
    allowed = LAYERS["usecases"][1] | {"usecases"}
    return [f"{u.name}: {what} → {module}" for u in use_cases for what, module in declaration_references(u)
            if module.partition(".")[0] == "opgov" and layer_of(module) not in allowed]


def test_every_declaration_resolves_to_a_layer_below_it():
    from opgov.usecases import USE_CASES

    assert upward_references(USE_CASES) == []


def test_an_upward_reference_of_a_declaration_is_caught():
    from opgov.usecases.declaration import UseCase, lazy
    from opgov.usecases.requests.ops import OperatorRef

    planted = UseCase("planted", request=OperatorRef, result=dict, service=lazy("opgov.api.headers", "deprecation"),
                      method="GET", path="/api/v1/planted", summary="planted")
    assert upward_references([planted]) == ["planted: service → opgov.api.headers"]
    with pytest.raises((ImportError, AttributeError, AssertionError)):
        declaration_references(UseCase("gone", result=dict, service=lazy("opgov.services.ops", "no_such_service"),
                                       method="GET", path="/api/v1/gone", summary="gone"))


def area_mismatches(declared_in: dict, commands: dict[str, tuple[str, tuple[str, ...]]]) -> list[str]:
    """Each part of a use case whose module is not named after the use case's area (the module of
    usecases/ that declares it): its request (``usecases/requests/<area>.py``), result classes
    (``results/<area>.py``) and service (``services/<area>.py``), as ``name: what in module``; and
    each CLI command calling a declaration of another area than its module's
    (``cli/commands_<area>.py``; ``commands`` maps a command to the module of its function and the
    declarations it calls, opgov.cli.client.callers)."""
    wrong = []
    for use_case, area in declared_in.items():
        expected = {"request": f"opgov.usecases.requests.{area}", "result": f"opgov.results.{area}",
                    "service": f"opgov.services.{area}"}
        for what, module in declaration_references(use_case):
            if module != expected[what]:
                wrong.append(f"{use_case.name}: {what} in {module}, not {expected[what]}")
    for command, (module, called) in commands.items():
        for declaration in called:
            area = declaration.rpartition(".")[0]
            if module != f"opgov.cli.commands_{area.rpartition('.')[2]}":
                wrong.append(f"command {command} in {module} calls {declaration}")
    return wrong


def _command_modules() -> dict[str, str]:
    """Every CLI command (``tokens create``) → the module of the function that runs it (a group with a
    callback, ``proposals``, its callback's)."""
    import typer.main

    from opgov.cli.main import app

    found = {}

    def walk(group, prefix):
        for name, command in group.commands.items():
            full = f"{prefix} {name}".strip()
            if getattr(command, "callback", None) is not None:
                found[full] = command.callback.__module__
            if hasattr(command, "commands"):
                walk(command, full)

    walk(typer.main.get_command(app), "")
    return found


def _commands_calling() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every command that calls a use case → the module of its function and the declarations it
    calls (opgov.cli.client.callers)."""
    from opgov.cli.client import callers

    modules = _command_modules()
    return {command: (modules[command], called) for command, called in callers().items()}


def test_every_part_of_a_use_case_is_in_the_files_of_its_area():
    """One name per area: a use case declared in usecases/<area>.py has its request, result and
    service in the modules of that name in their layers, and the CLI commands that call it are in
    cli/commands_<area>.py."""
    import opgov.usecases as usecases

    declared_in = {u: area for area in usecases.AREAS
                   for u in importlib.import_module(f"opgov.usecases.{area}").DECLARED}
    assert area_mismatches(declared_in, _commands_calling()) == []


def test_a_part_outside_its_area_is_caught():
    from opgov.usecases.declaration import UseCase, lazy
    from opgov.results.ops import OperatorDetail
    from opgov.usecases.requests.ops import OperatorRef

    planted = UseCase("tokens list", request=OperatorRef, result=OperatorDetail,
                      service=lazy("opgov.services.tokens", "list_tokens"), method="GET", path="/api/v1/planted",
                      summary="planted")
    commands = {**_commands_calling(), "tokens list": ("opgov.cli.commands_tokens", ("opgov.usecases.ops.OPS_SHOW",))}
    assert area_mismatches({planted: "ops"}, commands) == [
        "tokens list: service in opgov.services.tokens, not opgov.services.ops",
        "command tokens list in opgov.cli.commands_tokens calls opgov.usecases.ops.OPS_SHOW"]


def test_every_declaration_is_a_name_of_its_areas_module():
    """A declaration is a module-level name of its area's module, spelt as the use case
    (``REVIEW_MANY = UseCase("review many", …)``), and ``DECLARED`` holds exactly those: what an
    entrypoint imports is what the API derives its routes from."""
    import opgov.usecases as usecases
    from opgov.usecases.declaration import UseCase

    wrong = []
    for area in usecases.AREAS:
        module = importlib.import_module(f"opgov.usecases.{area}")
        names = {name: value for name, value in vars(module).items() if isinstance(value, UseCase)}
        wrong += [f"{area}.{name}: {value.name!r}" for name, value in names.items()
                  if name != value.name.upper().replace(" ", "_").replace("-", "_")]
        if list(names.values()) != list(module.DECLARED):
            wrong.append(f"{area}.DECLARED is not its declarations in order")
    assert wrong == []


def test_a_reader_follows_a_command_to_its_service():
    """`opgov review 12 13 14 --approve`: the command's function imports the declaration it calls,
    and the declaration names its service; no lookup by name between them."""
    from opgov.cli.client import callers
    from opgov.usecases.governance import REVIEW_MANY

    assert "opgov.usecases.governance.REVIEW_MANY" in callers()["review"]
    assert (REVIEW_MANY.service.module, REVIEW_MANY.service.name) == ("opgov.services.governance", "review_many")


# the entrypoints: what calls a use case
ENTRYPOINTS = ("cli", "api", "web", "export_check")
# how many of their calls may still look a use case up by a name in a string (named("…"), ask("…"), call("…"))
LOOKUPS_BY_NAME_ALLOWED = 0


def lookups_by_name(package: Path = PACKAGE) -> list[str]:
    """Each call of ``named``, ``ask`` or ``call`` (a function or a method) in an entrypoint module
    whose first argument is a string literal: a use case looked up by name, which neither a reader
    nor a tool can follow to its declaration, as ``file:line: the call``."""
    found = []
    for name, path in _modules(package).items():
        if layer_of(name) not in ENTRYPOINTS:
            continue
        for node in ast.walk(_parse(path)):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                continue
            function = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if function in ("named", "ask", "call"):
                found.append(f"{path.relative_to(package.parent)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_entrypoints_hold_the_use_cases_they_call():
    found = lookups_by_name()
    assert len(found) <= LOOKUPS_BY_NAME_ALLOWED, "\n".join(found)


def test_a_lookup_by_name_is_caught(copy):
    before = set(lookups_by_name(copy))
    plants = [("cli/commands_queue.py", 'def _planted():\n    return ask("queue", reason=[])\n', "ask('queue', reason=[])"),
              ("api/routers/checks.py", '_PLANTED = usecases.named("check-model")\n', "usecases.named('check-model')"),
              ("export_check.py", 'def _planted(client):\n    return client.call("export-check")\n',
               "client.call('export-check')")]
    planted = {f"opgov/{file}:{_plant(copy / file, text)}: {call}" for file, text, call in plants}
    # a name that comes from data, and a lookup below the entrypoints, are not what this counts
    _plant(copy / "api" / "usecases.py", "def _planted(name):\n    return named(name)\n")
    _plant(copy / "services" / "ops.py", 'def _planted():\n    return named("ops show")\n')
    assert set(lookups_by_name(copy)) - before == planted


def _models_declared(package: Path, layers: tuple[str, ...]) -> list[str]:
    """Classes of those layers deriving from pydantic's ``BaseModel`` or a class named ``Result``, as
    ``module.Class``."""
    found = []
    for name, path in _modules(package).items():
        if layer_of(name) not in layers:
            continue
        for node in ast.walk(_parse(path)):
            if isinstance(node, ast.ClassDef) and any(ast.unparse(b).rpartition(".")[2] in ("BaseModel", "Result")
                                                      for b in node.bases):
                found.append(f"{name}.{node.name}")
    return found


def test_results_are_declared_in_results():
    # a service builds a result and a renderer renders one: neither declares one (opgov/results/ does)
    assert _models_declared(PACKAGE, ("services", "render", "web")) == []


# A service returns a typed result (a frozen dataclass: results/ for a use case's, else beside the
# function), which the entrypoint renders; a pure helper (a name, a check of a text, a rendering) lives
# in the layer it belongs to, and one used only in its module is private.
UNTYPED = {"dict", "Dict", "tuple", "Tuple", "str", "bytes"}  # no service returns these...
OF_UNTYPED = {"list", "List", "set", "Set", "frozenset", "FrozenSet", "Sequence", "Iterable", "Iterator"}  # ...nor these of them
UNTYPED_RETURNS_ALLOWED = 0


def _untyped(node: ast.expr | None) -> bool:
    """Whether a return annotation is a dict, a tuple, str or bytes, a list or set of one, or a union
    with one (``list[str] | None``, ``Optional[dict]``)."""
    if node is None:
        return False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a quoted annotation
        return _untyped(ast.parse(node.value, mode="eval").body)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _untyped(node.left) or _untyped(node.right)
    base = node.value if isinstance(node, ast.Subscript) else node
    name = ast.unparse(base).rpartition(".")[2]
    if name in UNTYPED:
        return True
    if isinstance(node, ast.Subscript) and name in OF_UNTYPED | {"Optional", "Union"}:
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return any(_untyped(item) for item in items)
    return False


def untyped_returns(package: Path = PACKAGE) -> list[str]:
    """Public top-level functions of services/ annotated to return a dict, a tuple or text (or a
    list or set of them), as ``path:line name -> annotation``."""
    found = []
    for name, path in _modules(package).items():
        if layer_of(name) != "services":
            continue
        for node in _parse(path).body:
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_")
                    and _untyped(node.returns)):
                found.append((str(path.relative_to(package.parent)), node.lineno,
                              f"{node.name} -> {ast.unparse(node.returns)}"))
    return [f"{file}:{line} {what}" for file, line, what in sorted(found)]


def test_services_return_typed_results():
    found = untyped_returns()
    assert len(found) <= UNTYPED_RETURNS_ALLOWED, "\n".join(found)


def test_an_untyped_return_of_a_service_is_caught(copy):
    before = set(untyped_returns(copy))
    plants = [("services/ops.py", "def planted_counts(ctx) -> dict[str, int]:\n    return {}\n",
               "planted_counts -> dict[str, int]"),
              ("services/queue.py", "def planted_pair(ctx) -> 'tuple[int, int] | None':\n    return None\n",
               "planted_pair -> 'tuple[int, int] | None'"),
              ("services/sync.py", "async def planted_text(ctx) -> str:\n    return ''\n", "planted_text -> str"),
              ("services/common.py", "def planted_names(ctx) -> Optional[list[bytes]]:\n    return None\n",
               "planted_names -> Optional[list[bytes]]")]
    planted = {f"opgov/{file}:{_plant(copy / file, text) - 1} {what}" for file, text, what in plants}
    # a private helper, a method and a typed result are not counted
    _plant(copy / "services" / "ops.py", "def _helper() -> dict:\n    return {}\n\n\n"
                                         "class Planted:\n    def names(self) -> list[str]:\n        return []\n\n\n"
                                         "def planted_typed(ctx) -> list[Planted] | None:\n    return None\n")
    assert set(untyped_returns(copy)) - before == planted


LONG = 80  # lines: a function longer than this does several things, or should say why not
MOST_LONG = 3  # kept long where a split would make them worse (fastyaml._walk: the import's hot loop)


def long_functions(package: Path = PACKAGE) -> list[str]:
    """Functions and methods of ``package`` over :data:`LONG` lines (``end_lineno - lineno + 1``,
    decorators excluded; a nested function counts on its own and inside its parent), as
    ``path:line name (length)``, longest first."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(_parse(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > LONG:
                    found.append((length, f"{path.relative_to(package.parent)}:{node.lineno} {node.name} ({length})"))
    return [text for _, text in sorted(found, key=lambda f: -f[0])]


def test_few_functions_are_long():
    long = long_functions()
    assert len(long) <= MOST_LONG, "\n".join(long)


def test_a_long_function_is_counted(copy):
    before = long_functions(copy)
    body = "".join(f"    x{i} = {i}\n" for i in range(LONG - 1))  # the def line and these: LONG lines
    line = _plant(copy / "core" / "names.py", f"@staticmethod\ndef planted():\n{body}") - (LONG - 1)
    assert long_functions(copy) == before  # exactly LONG lines, decorator apart: not long
    _plant(copy / "core" / "names.py", "def planted_too():\n" + body + "    return x0\n")
    assert set(long_functions(copy)) - set(before) == {f"opgov/core/names.py:{line + LONG + 1} planted_too ({LONG + 1})"}


def test_the_page_script_places_what_python_computed():
    # pages.js shows the answers of opgov's Python (opgov.services.pages.opset_view): a rule of opset
    # build written again in JavaScript (issue 44) would make it grow past this
    script = PACKAGE / "web" / "static" / "pages.js"
    assert len(script.read_text(encoding="utf-8").splitlines()) <= 250


@pytest.fixture
def copy(tmp_path) -> Path:
    """A copy of the package's Python files, to plant violations in (each planting test's own)."""
    target = tmp_path / "opgov"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__", "static", "templates"))
    return target


def _plant(path: Path, text: str) -> int:
    """Append ``text`` to the file; the line of its last line."""
    old = path.read_text(encoding="utf-8")
    path.write_text(old.rstrip("\n") + "\n\n" + text, encoding="utf-8")
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_checker_catches_planted_violations(copy):
    before = set(violations(copy))
    planted = {
        ("opgov/core/names.py", _plant(copy / "core" / "names.py", "import sqlalchemy\n"), "sqlalchemy"),
        ("opgov/formats/files.py", _plant(copy / "formats" / "files.py",
                                          "from opgov.services.common import Ctx\n"), "opgov.services.common"),
        ("opgov/render/escapes.py", _plant(copy / "render" / "escapes.py",
                                           "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                           "    from ..cli import runtime\n"), "opgov.cli.runtime"),
        ("opgov/db/limits.py", _plant(copy / "db" / "limits.py",
                                      "def _config():\n    from opgov.api.config import Config\n\n"
                                      "    return Config\n") - 2, "opgov.api.config"),
    }
    caught = {(v.file, v.line, v.imported) for v in set(violations(copy)) - before}
    assert caught == planted


# The entrypoints (the pages and the static site too) call declared use cases (opgov.usecases) or
# read the reads room (opgov.reads); a direct import of a service is the exception, counted here.
SERVICE_IMPORTERS = ("api", "web", "cli")  # the entrypoints whose service imports are counted
MAX_SERVICE_IMPORTS = 3


def service_imports(package: Path = PACKAGE) -> list[str]:
    """Each import statement of an entrypoint layer that names a module of services/ (at any depth of
    the file, type-only ones too), as ``file:line: module``."""
    modules = _modules(package)
    found = set()
    for name, path in modules.items():
        if layer_of(name) not in SERVICE_IMPORTERS:
            continue
        for i in _imports(name, path, modules):
            target = _target(i.module, modules)
            if target.partition(".")[0] == "opgov" and layer_of(target) == "services":
                found.add((str(path.relative_to(package.parent)), i.line, target))
    return [f"{file}:{line}: {module}" for file, line, module in sorted(found)]


def test_entrypoints_import_few_services():
    found = service_imports()
    assert len({line.rpartition(":")[0] for line in found}) <= MAX_SERVICE_IMPORTS, "\n".join(found)


def test_a_service_import_from_an_entrypoint_is_counted(copy):
    before = set(service_imports(copy))
    web = _plant(copy / "web" / "render.py", "from opgov.services.ops import list_ops\n")
    api = _plant(copy / "api" / "html.py", "def _q():\n    from opgov.services import queue\n\n    return queue\n") - 2
    cli = _plant(copy / "cli" / "commands_ops.py", "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                                   "    from ..services.common import require\n")
    bare = _plant(copy / "cli" / "commands_status.py", "import opgov.services.status\n")
    planted = {f"opgov/web/render.py:{web}: opgov.services.ops", f"opgov/api/html.py:{api}: opgov.services.queue",
               f"opgov/cli/commands_ops.py:{cli}: opgov.services.common",
               f"opgov/cli/commands_status.py:{bare}: opgov.services.status"}
    assert set(service_imports(copy)) - before == planted
    assert len(set(service_imports(copy))) > MAX_SERVICE_IMPORTS


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
        for w in sorted(graph.get(v, ())):
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


def test_the_graph_sees_function_level_and_type_only_imports():
    # commands import what they call inside the command function (start-up stays lazy)
    assert "opgov.services.admin" in _graph()["opgov.cli.commands_db"]
    assert "opgov.results.decomps" in _graph()["opgov.render.decomps_text"]
    assert "opgov.results.runtimes" in _graph(typing=True)["opgov.render.runtimes"]
    assert "opgov.results.runtimes" not in _graph()["opgov.render.runtimes"]


def test_no_import_cycles():
    # type-only imports never run, so only the others can make an import-time cycle
    assert _cycles(_graph()) == []


def test_the_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def layer_table() -> str:
    """The Markdown of the layer table, the confined libraries and the exceptions, as
    docs/architecture.md holds them."""
    rows = ["| layer | what | may import (besides itself) |", "|---|---|---|"]
    for layer, (what, allowed) in LAYERS.items():
        order = sorted(allowed, key=lambda name: (name in ROOT, list(LAYERS).index(name)))
        rows.append(f"| `{layer}` | {what} | {', '.join(order) if order else '—'} |")
    rows += ["", "| library | only in |", "|---|---|"]
    rows += [f"| {lib} | {', '.join(f'`{name}`' for name in LAYERS if name in layers)} |"
             for lib, layers in CONFINED.items()]
    rows += ["", "Known exceptions, each kept visible until it is fixed:", ""]
    rows += [f"- `{importer}` → `{imported}`: {why}" for (importer, imported), why in EXCEPTIONS.items()]
    return "\n".join(rows) + "\n"


BEGIN = "<!-- layer table: generated from tests/test_architecture.py -->\n"
END = "<!-- end of layer table -->\n"


def _doc_table(text: str) -> str:
    start, end = text.find(BEGIN), text.find(END)
    return text[start + len(BEGIN):end] if 0 <= start < end else ""


def test_the_doc_shows_the_table_the_test_enforces():
    assert _doc_table(DOC.read_text(encoding="utf-8")) == layer_table(), (
        "docs/architecture.md differs: PYTHONPATH=. python tests/test_architecture.py rewrites its table")


def test_the_docs_name_tests_that_exist():
    # the tests sit under the layer they test: a doc pointing at one follows it when it moves
    root = PACKAGE.parent
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md")), *sorted((root / "docs").rglob("*.in"))]
    wrong = []
    for page in pages:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for path, name in re.findall(r"(tests/[\w/]+\.py)(?:::(\w+))?", line):
                test = root / path
                defined = test.is_file() and (not name or re.search(rf"^\s*def {name}\(",
                                                                    test.read_text(encoding="utf-8"), re.M))
                if not defined:
                    wrong.append(f"{page.relative_to(root)}:{number}: {path}{'::' + name if name else ''}")
    assert wrong == []


HEAVY = ("sqlalchemy", "yaml", "rich", "pydantic", "jinja2", "alembic", "fastapi")


def _modules_after(args: list[str]) -> tuple[set[str], str]:
    """The modules a fresh ``opgov ARGS`` process has imported when it is done, and its output."""
    code = ("import json, sys\nfrom opgov.cli.main import run\n"
            f"try:\n    run({args!r})\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(json.dumps(sorted(sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={"PATH": "/usr/bin:/bin", "COLUMNS": "100"})
    return set(json.loads(proc.stderr.strip().splitlines()[-1])), proc.stdout


def _loaded_by(args: list[str]) -> set[str]:
    """The top-level modules a fresh ``opgov ARGS`` process has imported when it is done."""
    modules, out = _modules_after(args)
    assert "Usage" in out
    return {m.partition(".")[0] for m in modules}


def test_help_imports_nothing_heavy():
    assert sorted(_loaded_by(["--help"]) & set(HEAVY)) == []


@pytest.mark.parametrize("args", [["check-bc", "--help"], ["opset", "build", "--help"], ["report", "--help"]])
def test_a_command_help_imports_only_what_renders_help(args):
    # typer renders a command's help with rich when it is installed; nothing else is needed
    assert sorted(_loaded_by(args) & set(HEAVY)) in ([], ["rich"])



@pytest.mark.parametrize("args, area", [(["runtimes", "list"], "runtimes"), (["decomps", "list"], "decomps"),
                                        (["status"], "status")])
def test_a_command_loads_only_its_own_areas_declarations(tmp_path, args, area):
    """A command asks the use cases of its own area (opgov.cli.commands_<area>), so it imports that
    area's declarations, requests and results and no other area's (each costs ~10 ms to load)."""
    from opgov.usecases import AREAS

    subprocess.run([sys.executable, "-m", "opgov", "--db", str(tmp_path / "a.db"), "db", "upgrade"], check=True,
                   capture_output=True)
    loaded, out = _modules_after(["--db", str(tmp_path / "a.db"), *args])
    assert {a for a in AREAS if f"opgov.usecases.{a}" in loaded} == {area}, out
    assert {a for a in AREAS if f"opgov.results.{a}" in loaded} <= {area, "imports"}  # status counts snapshots


if __name__ == "__main__":
    text = DOC.read_text(encoding="utf-8")
    if not 0 <= text.find(BEGIN) < text.find(END):
        sys.exit(f"{DOC}: no {BEGIN.strip()} … {END.strip()} block to rewrite")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    DOC.write_text(text[:start] + layer_table() + text[end:], encoding="utf-8")
