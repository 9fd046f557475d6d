#!/usr/bin/env python3
"""Rewrite use case declarations written in the old style (``"module:attribute"`` strings) into the
new one (the objects themselves), in place:

    request=f"{REQUESTS}:OperatorRef"                 → request=OperatorRef
    result=f"list[{MODELS}:OperatorSummary]"          → result=list[OperatorSummary]
    result="opgov.results.decomps:A | opgov.results.runtimes:B" → result=A | B
    service="opgov.services.ops:show_op"              → service=lazy("opgov.services.ops", "show_op")

and adds the imports the names need. The module's string constants (``REQUESTS = "…"``) are read to
expand the f-strings and then removed when nothing uses them any more.

    python scripts/convert_declarations.py opgov/usecases/registry.py [more files…]

Other old fields (``render``, ``cached``, ``headers``, ``light``, …) are reported, not converted:
see docs/architecture.md, "Adding a use case", for where each now lives.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

CONVERTED = ("request", "result", "service")
OLD_FIELDS = {"render", "cached", "headers", "route", "reads_unless", "transactions", "asked_by", "prepare",
              "operation", "light", "one_of", "formats"}


def _string(node: ast.AST, constants: dict[str, str]) -> str | None:
    """The value of a string or an f-string over the module's string constants."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(value.value)
            elif isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name):
                parts.append(constants[value.value.id])
            else:
                return None
        return "".join(parts)
    return None


def _type(ref: str, imports: dict[str, str]) -> str:
    """``list[m:A]`` / ``m:A | m:B`` / ``m:A`` as Python, recording ``name → module`` in ``imports``."""
    if " | " in ref:
        return " | ".join(_type(part, imports) for part in ref.split(" | "))
    if ref.startswith("list[") and ref.endswith("]"):
        return f"list[{_type(ref[5:-1], imports)}]"
    module, _, name = ref.partition(":")
    if imports.setdefault(name, module) != module:
        raise SystemExit(f"{name} comes from both {imports[name]} and {module}: import one under another name")
    return name


def _import(module: str, names: list[str]) -> str:
    """``from module import names``, wrapped at 120 characters."""
    line = f"from {module} import {', '.join(names)}"
    if len(line) <= 120:
        return line
    rows, row = [], "   "
    for name in names:
        if len(row) + len(name) + 2 > 116:
            rows.append(row)
            row = "   "
        row += f" {name},"
    rows.append(row)
    return f"from {module} import (\n" + "\n".join(rows) + "\n)"


def convert(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    module_name = ".".join(path.with_suffix("").parts[-3:]) if "opgov" in path.parts else path.stem
    constants = {"__name__": module_name}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = _string(node.value, constants)
            if value is not None:
                constants[node.targets[0].id] = value
    constants.setdefault("MODELS", "opgov.results.models")
    imports: dict[str, str] = {}
    edits: list[tuple[int, int, str]] = []  # (start offset, end offset, new text)
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(lineno: int, col: int) -> int:
        return starts[lineno - 1] + len(lines[lineno - 1].encode("utf-8")[:col].decode("utf-8"))

    lazy_used = False
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "UseCase"):
            continue
        for keyword in node.keywords:
            if keyword.arg in OLD_FIELDS:
                print(f"{path}:{keyword.lineno}: {keyword.arg}= is no field of UseCase any more: move it by hand",
                      file=sys.stderr)
            if keyword.arg not in CONVERTED:
                continue
            ref = _string(keyword.value, constants)
            if ref is None:
                continue
            if keyword.arg == "service":
                module, _, name = ref.partition(":")
                new = f'lazy("{module}", "{name}")'
                lazy_used = True
            else:
                new = _type(ref, imports)
            edits.append((offset(keyword.value.lineno, keyword.value.col_offset),
                          offset(keyword.value.end_lineno, keyword.value.end_col_offset), new))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    # the string constants nothing uses any more
    for _ in constants:
        for name in [n for n in constants if n.isupper()]:
            if len(re.findall(rf"\b{name}\b", text)) == 1:
                text = re.sub(rf"^{name} = .*\n", "", text, flags=re.M)
    by_module: dict[str, list[str]] = {}
    for name, module in imports.items():
        by_module.setdefault(module, []).append(name)
    wanted = [_import(module, sorted(names)) for module, names in sorted(by_module.items())]
    declaration = "from opgov.usecases.declaration import "
    old = re.search(rf"^{re.escape(declaration)}(.*)$", text, flags=re.M)
    names = {n.strip() for n in old.group(1).split(",")} - {"MODELS"} if old else {"UseCase"}
    if lazy_used:
        names.add("lazy")
    wanted.append(declaration + ", ".join(sorted(names, key=lambda n: (n[0].islower(), n))))
    block = "\n".join(sorted(wanted, key=lambda line: line.split()[1])) + "\n"
    text = text.replace(old.group(0) + "\n", block) if old else text
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        convert(Path(arg))
