"""What a runtime's own sources say beyond its kernel registries: the operators it serves without a
kernel yaml entry, and the PyTorch release it is built against.

``prim-ops``
    ExecuTorch's ``kernels/prim_ops/register_prim_ops.cpp``: each operator it serves is
    registered by its quoted name (``"aten::sym_size.int",``,
    ``Kernel("executorch_prim::et_view.default", et_view)``). The names are canonicalized, first occurrence first.
``pytorch pin``
    ExecuTorch's ``.ci/docker/ci_commit_pins/pytorch.txt``: ``release/2.12`` (a release branch) or
    ``v2.6.0`` (a tag) → ``2.12`` / ``2.6.0``; a commit hash names no release.

Anything malformed is one :class:`BadInput` line naming the file (and the line).
"""

from __future__ import annotations

import re

from opgov.core.errors import BadInput
from opgov.core.names import canonical

_REGISTERED = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*::[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)"')
_PIN = re.compile(r"^(?:release/|v)?(\d+\.\d+(?:\.\d+)?)(?:-rc\d+)?$")


def looks_like_prim_ops(text: str) -> bool:
    """A C++ source (a prim ops registration), not an operator list."""
    head = text.lstrip()[:4096]
    return head.startswith(("/*", "//", "#include")) or "\n#include" in head


def prim_ops(text: str, name: str) -> tuple[str, ...]:
    """The operators a ``register_prim_ops.cpp`` registers by name."""
    found: dict[str, None] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        for match in _REGISTERED.finditer(line):
            try:
                found[canonical(match.group(1))] = None
            except BadInput as err:
                raise BadInput(err.message, file=name, line=number) from None
    if not found:
        raise BadInput("registers no operator by a quoted \"namespace::name\" (not a register_prim_ops.cpp)",
                       file=name)
    return tuple(found)


def pytorch_pin(text: str, name: str) -> str:
    """The PyTorch release a pin file names (``release/2.12`` → ``2.12``)."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    if len(lines) != 1:
        raise BadInput("a PyTorch pin is one line (release/2.12, v2.6.0)", file=name)
    match = _PIN.match(lines[0])
    if match is None:
        raise BadInput(f"{lines[0]!r} names no PyTorch release (a commit? give the release with --torch)",
                       file=name, line=1)
    return match.group(1)
