"""What an ExecuTorch release's sources say about its kernels, read from a source tree (a checkout
at a release tag, or any reader of its files): the kernel registries, the prim ops, the PyTorch pin,
and, for each kernel, the dtypes it accepts per argument and the argument checks it makes.

How the constraints are read (no compiler: patterns ExecuTorch's kernels are written in):

- a kernel is the C++ function its registry entry names (``torch::executor::gelu_out``), found in
  ``kernels/portable/cpu/*.cpp`` (``kernels/optimized/cpu/*.cpp`` for the optimized registry); its
  parameters after the runtime context are the out= overload's arguments, in order;
- ``ET_SWITCH_<SET>_TYPES(x.scalar_type(), ...)`` in the kernel or a helper of its file: ``x`` takes
  the dtypes of ``<SET>``, expanded from that release's own macro definitions
  (``runtime/core/exec_aten/util/scalar_type_util.h``); a local ``ScalarType t = x.scalar_type()``
  stands for ``x``; a switch on a promoted type (``promoteTypes``) constrains the common dtype of
  the call, on ``utils::get_compute_type(...)`` the common dtype computed in float for float16 and
  bfloat16;
- ``x, utils::SupportedTensorDtypes::<SET>`` (the elementwise utilities): ``x`` takes ``<SET>``;
- the argument checks of the kernel and of the ``check_*`` helpers it calls (in
  ``kernels/portable/cpu/util/*.cpp``): ``x.dim() == 3 || x.dim() == 4`` and ``tensor_is_rank(x, 2)``
  (ranks), ``x.scalar_type() == ScalarType::Long`` (a dtype), ``tensors_have_same_dtype(a, b, ...)``.

A switch whose subject none of these rules names is kept as ``unattributed`` (its dtypes, no
argument): a call outside them is "unknown", never "runs". Each kernel also records its source file.
Pure: the caller gives a function reading a file of the tree (None when absent) and one listing a folder.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from opgov.core.errors import BadInput

Read = Callable[[str], "str | None"]
ListDir = Callable[[str], "list[str]"]

PORTABLE_YAML = "kernels/portable/functions.yaml"
OPTIMIZED_YAML = "kernels/optimized/optimized.yaml"
PRIM_OPS = "kernels/prim_ops/register_prim_ops.cpp"
PIN = ".ci/docker/ci_commit_pins/pytorch.txt"
SWITCH_HEADER = "runtime/core/exec_aten/util/scalar_type_util.h"
EDGE_YAML = "exir/dialects/edge/edge.yaml"
MIXED_TYPES = "exir/passes/remove_mixed_type_operators.py"
PORTABLE_DIR = "kernels/portable/cpu"
OPTIMIZED_DIR = "kernels/optimized/cpu"

# c10's ScalarType names → torch's dtype names
SCALAR_TYPES = {
    "Byte": "uint8", "Char": "int8", "Short": "int16", "Int": "int32", "Long": "int64", "Half": "float16",
    "Float": "float32", "Double": "float64", "ComplexHalf": "complex32", "ComplexFloat": "complex64",
    "ComplexDouble": "complex128", "Bool": "bool", "QInt8": "qint8", "QUInt8": "quint8", "QInt32": "qint32",
    "BFloat16": "bfloat16", "QUInt4x2": "quint4x2", "QUInt2x4": "quint2x4", "Bits1x8": "bits1x8",
    "Bits2x4": "bits2x4", "Bits4x2": "bits4x2", "Bits8": "bits8", "Bits16": "bits16",
    "Float8_e5m2": "float8_e5m2", "Float8_e4m3fn": "float8_e4m3fn", "UInt16": "uint16", "UInt32": "uint32",
    "UInt64": "uint64",
}
_INT = ("uint8", "int8", "int16", "int32", "int64")
_FLOAT = ("float32", "float64")
# the elementwise utilities' SupportedTensorDtypes (kernels/portable/cpu/util/dtype_util.h), by their letters
_SUPPORTED = {
    "REALHBBF16": _INT + _FLOAT + ("float16", "bool", "bfloat16"),
    "REALHBF16": _INT + _FLOAT + ("float16", "bfloat16"),
    "REALHB": _INT + _FLOAT + ("float16", "bool"),
    "REALB": _INT + _FLOAT + ("bool",),
    "REALH": _INT + _FLOAT + ("float16",),
    "REAL": _INT + _FLOAT,
    "FLOATHBF16": _FLOAT + ("float16", "bfloat16"),
    "FLOATH": _FLOAT + ("float16",),
    "FLOAT": _FLOAT,
    "INTB": _INT + ("bool",),
    "BOOL": ("bool",),
    "BOOL_OR_BYTE": ("bool", "uint8"),
}
# what utils::get_compute_type makes of a common dtype: float16 and bfloat16 are computed in float32
COMPUTE_UPCAST = {"float16": "float32", "bfloat16": "float32"}


@dataclass(frozen=True)
class KernelFacts:
    """What one kernel's sources say: its parameters (the out= overload's arguments, as the C++
    names them), the dtypes each accepts, the dtypes the call's common dtype must be in
    (``common``; ``compute``: after float16/bfloat16 → float32), ranks, dtype equalities, switches on
    something no argument names (``unattributed``) and what was not found (``unknown``)."""

    kernel: str
    file: str | None
    params: tuple[str, ...] = ()
    dtypes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    common: tuple[str, ...] | None = None
    compute: tuple[str, ...] | None = None
    ranks: tuple[tuple[str, tuple[int, ...]], ...] = ()
    same_dtype: tuple[tuple[str, ...], ...] = ()
    unattributed: tuple[tuple[str, ...], ...] = ()
    unknown: str | None = None
    any_dtype: bool = False  # copies bytes (memcpy): any dtype, within its dtype equalities
    int_as_float: bool = False  # true division: integer or bool inputs have the common dtype float32

    def to_json(self) -> dict:
        out: dict = {"file": self.file, "params": list(self.params)}
        if self.dtypes:
            out["dtypes"] = {name: list(types) for name, types in self.dtypes}
        if self.common is not None:
            out["common"] = list(self.common)
        if self.compute is not None:
            out["compute"] = list(self.compute)
        if self.ranks:
            out["ranks"] = {name: list(r) for name, r in self.ranks}
        if self.same_dtype:
            out["same_dtype"] = [list(g) for g in self.same_dtype]
        if self.unattributed:
            out["unattributed"] = [list(t) for t in self.unattributed]
        if self.unknown:
            out["unknown"] = self.unknown
        if self.any_dtype:
            out["any_dtype"] = True
        if self.int_as_float:
            out["int_as_float"] = True
        return out


# --- C++ text, just enough -----------------------------------------------------------------------------

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def strip_comments(text: str) -> str:
    text = _STRING.sub('""', text)
    return _COMMENT.sub(" ", text)


def _balanced(text: str, start: int, open_: str = "(", close: str = ")") -> int:
    """The index just past the bracket closing the one at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def split_args(text: str) -> list[str]:
    """Top-level comma-separated parts of an argument list (without its brackets)."""
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "([{<" and not (ch == "<" and False):
            depth += ch in "([{"
        if ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)(.*)$", re.M)


def switch_macros(header: str) -> dict[str, tuple[tuple[str, ...], str]]:
    """Each function-like macro of a header → (its parameters, its body), continuation lines joined."""
    text = header.replace("\\\r\n", " ").replace("\\\n", " ")
    text = _COMMENT.sub(" ", text)
    return {m.group(1): (tuple(p.strip() for p in m.group(2).split(",")), m.group(3)) for m in _DEFINE.finditer(text)}


_INVOKE = re.compile(r"\b(ET_[A-Z0-9_]+)\s*\(")
_SCALAR = re.compile(r"ScalarType::(\w+)")


class SwitchSets:
    """The dtypes an ``ET_SWITCH_*`` macro invocation covers, expanded from the release's header."""

    def __init__(self, header: str | None) -> None:
        self.macros = switch_macros(header) if header else {}
        self._memo: dict[tuple, frozenset[str]] = {}

    def expand(self, name: str, args: tuple[str, ...], depth: int = 0) -> frozenset[str] | None:
        if name not in self.macros or depth > 12:
            return None
        key = (name, args)
        if key in self._memo:
            return self._memo[key]
        params, body = self.macros[name]
        bind = dict(zip(params, args))
        found: set[str] = set()
        for m in _SCALAR.finditer(body):
            token = bind.get(m.group(1), m.group(1))
            token = token.rsplit("::", 1)[-1]
            if token in SCALAR_TYPES:
                found.add(SCALAR_TYPES[token])
        for m in _INVOKE.finditer(body):
            inner = m.group(1)
            if inner not in self.macros or inner == name:
                continue
            end = _balanced(body, m.end() - 1)
            inner_args = tuple(bind.get(a, a) for a in split_args(body[m.end(): end - 1]))
            sub = self.expand(inner, inner_args, depth + 1)
            if sub:
                found |= sub
        # an _AND macro's extra types are its leading arguments (ET_SWITCH_REAL_TYPES_AND(Bool, ...))
        for p, a in bind.items():
            if p.startswith("ADDITIONAL") or re.fullmatch(r"T\d", p):
                token = a.rsplit("::", 1)[-1]
                if token in SCALAR_TYPES:
                    found.add(SCALAR_TYPES[token])
        result = frozenset(found)
        self._memo[key] = result
        return result

    def of_call(self, name: str, args: list[str]) -> tuple[frozenset[str] | None, str | None]:
        """(the dtypes, the switched expression) of an invocation ``name(args)``."""
        if name not in self.macros:
            return None, None
        params, _ = self.macros[name]
        subject = None
        for p, a in zip(params, args):
            if p == "TYPE":
                subject = a
        return self.expand(name, tuple(args)), subject


# --- kernels -------------------------------------------------------------------------------------------


def _functions(text: str) -> dict[str, list[tuple[list[str], str, int]]]:
    """Function definitions of a C++ file: name → [(parameter texts, body, start)]."""
    out: dict[str, list[tuple[list[str], str, int]]] = {}
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", text):
        name = m.group(1)
        if name in ("if", "for", "while", "switch", "return", "sizeof", "defined") or name.startswith("ET_"):
            continue
        close = _balanced(text, m.end() - 1)
        rest = text[close: close + 200]
        brace = re.match(r"\s*(?:const\s*)?(?:noexcept\s*)?(?:->\s*[\w:<>&, ]+)?\{", rest)
        if brace is None:
            continue
        start = close + brace.end() - 1
        end = _balanced(text, start, "{", "}")
        out.setdefault(name, []).append((split_args(text[m.end(): close - 1]), text[start:end], m.start()))
    return out


def _param_name(text: str) -> str:
    text = re.sub(r"=.*$", "", text).strip()
    m = re.search(r"([A-Za-z_]\w*)\s*(?:\[\s*\w*\s*\])?$", text)
    return m.group(1) if m else text


_CONTEXT = re.compile(r"(KernelRuntimeContext|RuntimeContext)\s*&")
_ELEMENTWISE_OUT = re.compile(r"\bapply_\w+_elementwise_fn\s*<[^;(]*?SupportedTensorDtypes::(\w+)\s*>\s*\(")
_SUPPORTED_USE = re.compile(r"\b([A-Za-z_]\w*)\s*,\s*(?:[\w:]*::)?SupportedTensorDtypes::(\w+)")
_LOCAL_TYPE = re.compile(r"(?:ScalarType|auto)\s+(\w+)\s*=\s*([^;]+);")
# a tensor of a list argument, by reference: `const Tensor& index = indices[i].value();`
_LOCAL_ELEMENT = re.compile(r"(?:const\s+)?Tensor\s*&\s*(\w+)\s*=\s*([A-Za-z_]\w*)\s*\[[^\]]*\](?:\.value\(\))?\s*;")
_DIM_EQ = re.compile(r"\b([A-Za-z_]\w*)(?:\.value\(\))?\.dim\(\)\s*==\s*(\d+)")
_IS_RANK = re.compile(r"tensor_is_rank\(\s*([A-Za-z_]\w*)(?:\.value\(\))?\s*,\s*(\d+)\s*\)")
_DTYPE_EQ = re.compile(r"\b([A-Za-z_]\w*)(?:\.value\(\))?\.scalar_type\(\)\s*==\s*(?:[\w:]*ScalarType::)(\w+)")
_SAME_DTYPE = re.compile(r"tensors_have_same_(?:shape_and_)?dtype\(([^;]*?)\)\s*\)")
_CHECK_MACRO = re.compile(r"\b(ET_KERNEL_CHECK(?:_MSG)?|ET_CHECK_OR_RETURN_FALSE|ET_LOG_AND_RETURN_IF_FALSE|ET_CHECK_MSG|ET_CHECK)\s*\(")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^;{}()]*>)?\s*\(")


def _subject(expr: str, locals_: dict[str, str], params: set[str], depth: int = 0) -> tuple[str, str | None]:
    """What a switch's expression stands for: ("param", name), ("common", None), ("compute", None)
    or ("?", text)."""
    expr = expr.strip()
    m = re.fullmatch(r"([A-Za-z_]\w*)(?:\[[^\]]*\])?(?:\.value\(\))?\.scalar_type\(\)", expr)
    if m and m.group(1) in params:
        return "param", m.group(1)
    if m and locals_.get(f"&{m.group(1)}") in params:  # a tensor of a list argument
        return "param", locals_[f"&{m.group(1)}"]
    ternary = re.fullmatch(r"[\w:]*isFloatingType\(\s*(\w+)\.scalar_type\(\)\s*\)\s*\?\s*\1\.scalar_type\(\)\s*:"
                           r"\s*[\w:]*ScalarType::(\w+)", expr)
    if ternary and ternary.group(1) in params:
        return "float_or", f"{ternary.group(1)}:{ternary.group(2)}"
    if re.search(r"get_scalar_dtype|\.isFloatingPoint\(|\.isIntegral\(|\.isBoolean\(", expr):
        return "scalar", None  # a Scalar's type: an exported program passes a bool, an int or a float
    if "get_compute_type" in expr:
        return "compute", None
    if re.search(r"promoteTypes|promote_type|get_common_type|common_type", expr):
        return "common", None
    if expr in locals_ and depth < 4:
        return _subject(locals_[expr], locals_, params, depth + 1)
    return "?", expr


def expand_defines(text: str, defines: dict[str, tuple[tuple[str, ...], str]]) -> str:
    """``text`` with each invocation of one of ``defines`` (macros defining a kernel) expanded after it."""
    extra = []
    for m in re.finditer(r"\b(DEFINE_\w+)\s*\(", text):
        if m.group(1) not in defines:
            continue
        params, body = defines[m.group(1)]
        end = _balanced(text, m.end() - 1)
        args = split_args(text[m.end(): end - 1])
        for p, a in zip(params, args):
            body = re.sub(rf"\b{re.escape(p)}\b", a, body)
        extra.append(body)
    return text + "\n" + "\n".join(extra) if extra else text


def helper_index(files: dict[str, str]) -> dict[str, tuple[list[str], str]]:
    """The functions the util and pattern files define (name → (parameters, body)), first definition."""
    out: dict[str, tuple[list[str], str]] = {}
    for text in files.values():
        for name, defs in _functions(text).items():
            out.setdefault(name, (defs[0][0], defs[0][1]))
    return out


_COMPLEX = frozenset({"complex32", "complex64", "complex128"})
_SCALARS = frozenset({"bool", "int64", "float64"})  # the types a Scalar holds (ET_SWITCH_SCALAR_OBJ_TYPES)


def _definition(fname: str, sources: dict[str, str]) -> tuple[str, str, list[str], str] | None:
    """Where the kernel ``fname`` is defined: (its file, the file's text, its parameters after the
    runtime context, its body), else None."""
    for path, text in sources.items():
        for params, body, _ in _functions(text).get(fname, []):
            if params and _CONTEXT.search(params[0]):
                return path, text, [_param_name(p) for p in params[1:]], body
    return None


def _scope(fname: str, text: str, body: str, helpers: dict[str, tuple[list[str], str]]) -> list[str]:
    """The code the kernel runs, its body first: the helpers of its file that are not kernels
    themselves, then the helpers of util/ and pattern/ it calls (comparison_tensor_out,
    unary_ufunc_*, check_*_args), their parameters renamed to the arguments the call passes."""
    scope = [body]
    for name, defs in _functions(text).items():
        for fparams, fbody, _ in defs:
            if name != fname and not (fparams and _CONTEXT.search(fparams[0]) and name.endswith("_out")):
                if re.search(rf"\b{re.escape(name)}\b", body):
                    scope.append(fbody)
    seen: set[str] = set()
    queue = list(scope)
    while queue:
        chunk = queue.pop()
        for m in _CALL.finditer(chunk):
            helper = m.group(1)
            if helper in seen or helper not in helpers or helper == fname:
                continue
            seen.add(helper)
            hparams, hbody = helpers[helper]
            open_ = chunk.find("(", m.end() - 1)
            end = _balanced(chunk, open_)
            if "SupportedTensorDtypes" in chunk[open_:end]:
                continue  # the elementwise utilities: the call itself says the dtypes (read below)
            call_args = [re.sub(r"\.value\(\)$", "", a.strip()) for a in split_args(chunk[open_ + 1: end - 1])]
            renamed = hbody
            for hp, a in zip(hparams, call_args):
                name = _param_name(hp)
                if re.fullmatch(r"[A-Za-z_]\w*", a) and name != a:
                    renamed = re.sub(rf"\b{re.escape(name)}\b", a, renamed)
            scope.append(renamed)
            if len(seen) < 12:
                queue.append(renamed)
    return scope


def _locals(scope: list[str], pset: set[str]) -> dict[str, str]:
    """The locals standing for an argument's dtype or element (the kernel's own assignments first)."""
    locals_: dict[str, str] = {}
    for chunk in scope:
        for m in _LOCAL_TYPE.finditer(chunk):
            locals_.setdefault(m.group(1), m.group(2))
        for m in _LOCAL_ELEMENT.finditer(chunk):
            if m.group(2) in pset:
                locals_.setdefault(f"&{m.group(1)}", m.group(2))
    return locals_


@dataclass
class _Dtypes:
    """What the switches of a kernel say, gathered as they are read."""

    args: dict[str, set[str]] = field(default_factory=dict)
    common: set[str] | None = None
    compute: set[str] | None = None
    unattributed: list[tuple[str, ...]] = field(default_factory=list)

    def any(self) -> bool:
        """Whether anything was found of the dtypes (an argument's, the common one, an unattributed switch)."""
        return bool(self.args or self.common is not None or self.compute is not None or self.unattributed)


def _guarded(code: str) -> list[tuple[int, int, set[str]]]:
    """The blocks of a fast path guarded by `x != ScalarType::Half && …` and the dtypes it excludes:
    those never reach the switches inside it (they take the general path further on)."""
    guarded = []
    for m in re.finditer(r"\bif\s*\(", code):
        close = _balanced(code, m.end() - 1)
        cond = code[m.end(): close - 1]
        brace = re.match(r"\s*\{", code[close:])
        if brace is None or "||" in cond:
            continue
        excluded = {SCALAR_TYPES[t] for t in re.findall(r"!=\s*(?:[\w:]*ScalarType::)(\w+)", cond) if t in SCALAR_TYPES}
        if excluded:
            start = close + brace.end() - 1
            guarded.append((start, _balanced(code, start, "{", "}"), excluded))
    return guarded


def _float_or(types: set[str], what: str, subject: str, code: str) -> set[str]:
    """``compute_type = isFloatingType(x) ? x : Float`` (then maybe get_compute_type): the dtypes of
    x whose compute type is one of the switch's ``types``."""
    _, other = what.split(":")
    upcast = re.search(rf"get_compute_type\(\s*{re.escape(subject)}\s*\)", code) is not None
    fallback_type = SCALAR_TYPES.get(other)
    taken = set()
    for d in _INT + _FLOAT + ("float16", "bfloat16", "bool"):
        computed = d if d in _FLOAT + ("float16", "bfloat16") else fallback_type
        if upcast:
            computed = COMPUTE_UPCAST.get(computed, computed)
        if computed in types:
            taken.add(d)
    return taken


def _read_switches(code: str, switches: SwitchSets, locals_: dict[str, str], pset: set[str]) -> _Dtypes:
    """The ``ET_SWITCH_*`` macros of the kernel's code, each attributed to what it switches on."""
    found = _Dtypes()
    complex_spans: list[tuple[int, int]] = []
    guarded = _guarded(code)
    # `if (t != ScalarType::Float) { t = ScalarType::Double; }`: t is one of two dtypes, whatever the call
    pinned = {m.group(1): {SCALAR_TYPES.get(m.group(2)), SCALAR_TYPES.get(m.group(3))}
              for m in re.finditer(r"\bif\s*\(\s*(\w+)\s*!=\s*[\w:]*ScalarType::(\w+)\s*\)\s*\{\s*\1\s*=\s*"
                                   r"[\w:]*ScalarType::(\w+)\s*;\s*\}", code)}
    for m in _INVOKE.finditer(code):
        name = m.group(1)
        if not name.startswith("ET_SWITCH_"):
            continue
        end = _balanced(code, m.end() - 1)
        if any(a <= m.start() < b for a, b in complex_spans):
            continue  # inside a complex branch: its switches say nothing of the real dtypes
        args = split_args(code[m.end(): end - 1])
        types, subject = switches.of_call(name, args)
        if types and types <= _COMPLEX:
            complex_spans.append((m.end(), end))
            continue  # the complex branch of a kernel
        if types is not None and types and {"bool", "int64", "float64"} <= types <= _SCALARS:
            continue  # a switch over a Scalar's own type
        if types is None or subject is None:
            found.unattributed.append(("?",))
            continue
        if subject.strip() in pinned and pinned[subject.strip()] <= types:
            continue  # the switch takes every dtype its subject can be
        outside = set().union(*(ex for a, b, ex in guarded if a <= m.start() < b))
        if outside:
            types = types | outside
        kind, what = _subject(subject, locals_, pset)
        if kind == "param":
            found.args.setdefault(what, set()).update(types)
        elif kind == "float_or":
            taken = _float_or(types, what, subject, code)
            if taken:
                found.args.setdefault(what.split(":")[0], set()).update(taken)
        elif kind == "scalar":
            continue
        elif kind == "common":
            found.common = (found.common or set()) | types
        elif kind == "compute":
            found.compute = (found.compute or set()) | types
        else:
            found.unattributed.append(tuple(sorted(types)))
    return found


def _read_case_switches(code: str, text: str, pset: set[str], dtypes: dict[str, set[str]]) -> None:
    """A plain C++ switch on an argument's dtype: its cases (written out, or by a macro of the file
    whose body is `case ScalarType::dtype:`) are dtypes the argument takes."""
    local = {k: v for k, v in switch_macros(text).items() if "case" in v[1]}
    for m in re.finditer(r"\bswitch\s*\(\s*([A-Za-z_]\w*)(?:\.value\(\))?\.scalar_type\(\)\s*\)\s*\{", code):
        if m.group(1) not in pset:
            continue
        block = code[m.end() - 1: _balanced(code, m.end() - 1, "{", "}")]
        cases = {SCALAR_TYPES[t] for t in re.findall(r"case\s+[\w:]*ScalarType::(\w+)", block) if t in SCALAR_TYPES}
        for name, (params_, body_) in local.items():
            for inv in re.finditer(rf"\b{re.escape(name)}\s*\(", block):
                args_ = split_args(block[inv.end(): _balanced(block, inv.end() - 1) - 1])
                bind = dict(zip(params_, args_))
                for t in re.findall(r"case\s+[\w:]*ScalarType::(\w+)", body_):
                    t = bind.get(t, t)
                    if t in SCALAR_TYPES:
                        cases.add(SCALAR_TYPES[t])
        if cases:
            dtypes.setdefault(m.group(1), set()).update(cases)


def _read_branches(code: str, dtypes: dict[str, set[str]]) -> None:
    """A branch for one dtype beside the switch (`if (in.scalar_type() == ScalarType::Bool) {...}`)
    adds that dtype to an argument the switches name, unless the branch refuses it."""
    for m in re.finditer(r"\bif\s*\(", code):
        close = _balanced(code, m.end() - 1)
        cond = code[m.end(): close - 1]
        block = code[close: close + 400]
        if re.match(r"\s*\{\s*ET_KERNEL_CHECK(?:_MSG)?\s*\([^,]*,\s*false\b", block):
            continue  # the branch refuses that dtype
        for a, t in _DTYPE_EQ.findall(cond):
            if a in dtypes and t in SCALAR_TYPES and "!=" not in cond:
                dtypes[a].add(SCALAR_TYPES[t])


def _read_supported(code: str, pset: set[str], dtypes: dict[str, set[str]]) -> None:
    """The elementwise utilities' ``SupportedTensorDtypes``: beside an argument, and as a template
    argument naming the result's dtypes
    (apply_bitensor_elementwise_fn<CTYPE, op_name, SupportedTensorDtypes::REALHBBF16>(fn, ctx, a, …, out))."""
    for m in _SUPPORTED_USE.finditer(code):
        arg, set_name = m.group(1), m.group(2)
        if arg in pset and set_name in _SUPPORTED:
            dtypes.setdefault(arg, set()).update(_SUPPORTED[set_name])
    for m in _ELEMENTWISE_OUT.finditer(code):
        set_name = m.group(1)
        open_ = code.find("(", m.end() - 1)
        call_args = split_args(code[open_ + 1: _balanced(code, open_) - 1])
        arg = call_args[-1].strip() if call_args else ""
        if arg in pset and set_name in _SUPPORTED:
            dtypes.setdefault(arg, set()).update(_SUPPORTED[set_name])


@dataclass
class _Checks:
    """The argument checks of a kernel: ranks, the dtypes a check takes (``exact``; ``listed``: the
    arguments whose check lists several) or refuses, and the groups that must share a dtype."""

    ranks: dict[str, set[int]]
    exact: dict[str, set[str]]
    refused: dict[str, set[str]]
    listed: set[str]
    same: list[tuple[str, ...]]


def _condition(args: list[str], index: int) -> str:
    """A check's condition, whitespace collapsed and outer parentheses gone."""
    cond = re.sub(r"\s+", " ", args[index]).strip()
    while cond.startswith("(") and _balanced(cond, 0) == len(cond):
        cond = cond[1:-1].strip()
    return cond


def _read_checks(code: str, locals_: dict[str, str], pset: set[str]) -> _Checks:
    """The checks (in the kernel and the check_* helpers it calls) whose whole condition is one of
    the patterns (a condition mixing others says nothing for certain)."""
    checks = _Checks({}, {}, {}, set(), [])
    for m in _CHECK_MACRO.finditer(code):
        args = split_args(code[m.end(): _balanced(code, m.end() - 1) - 1])
        index = 1 if m.group(1).startswith("ET_KERNEL_CHECK") else 0
        if len(args) <= index:
            continue
        cond = _condition(args, index)
        terms = [t.strip() for t in cond.split("||")]
        dims = [re.fullmatch(r"([A-Za-z_]\w*)(?:\.value\(\))?\.dim\(\) == (\d+)", t) for t in terms]
        if all(dims) and len({d.group(1) for d in dims}) == 1:
            if dims[0].group(1) in pset:
                checks.ranks.setdefault(dims[0].group(1), set()).update(int(d.group(2)) for d in dims)
            continue
        rank = re.fullmatch(r"tensor_is_rank\( ?([A-Za-z_]\w*)(?:\.value\(\))? ?, ?(\d+) ?\)", cond)
        if rank:
            if rank.group(1) in pset:
                checks.ranks.setdefault(rank.group(1), set()).add(int(rank.group(2)))
            continue
        # `t == ScalarType::Long || t == ScalarType::Int || …` (t an argument's dtype, or a local for it):
        # the dtypes the argument may have, listed
        listed = [re.fullmatch(r"([A-Za-z_]\w*(?:\.value\(\))?(?:\.scalar_type\(\))?) == (?:[\w:]*ScalarType::)(\w+)", t)
                  for t in terms]
        if len(terms) > 1 and all(listed):
            subjects = {_subject(x.group(1), locals_, pset) for x in listed}
            if len(subjects) == 1:
                kind, what = next(iter(subjects))
                if kind == "param" and what in pset:
                    checks.exact.setdefault(what, set()).update(SCALAR_TYPES[x.group(2)] for x in listed
                                                                if x.group(2) in SCALAR_TYPES)
                    checks.listed.add(what)
            continue
        compared = re.fullmatch(r"([A-Za-z_]\w*)(?:\.value\(\))?\.scalar_type\(\) (==|!=) "
                                r"(?:[\w:]*ScalarType::)(\w+)", cond)
        if compared:  # == names the one dtype it takes, != one it refuses
            arg = compared.group(1)
            if arg in pset and compared.group(3) in SCALAR_TYPES:
                (checks.exact if compared.group(2) == "==" else checks.refused).setdefault(arg, set()).add(
                    SCALAR_TYPES[compared.group(3)])
            continue
        floating = re.fullmatch(r"tensor_is_floating_type\( ?([A-Za-z_]\w*) ?\)", cond)
        if floating:
            if floating.group(1) in pset:
                checks.exact.setdefault(floating.group(1), set()).update(_FLOAT + ("float16", "bfloat16"))
            continue
        same_ = re.fullmatch(r"tensors_have_same_(?:shape_and_)?dtype\((.*)\)", cond)
        if same_:
            names_ = tuple(a for a in dict.fromkeys(a.strip() for a in split_args(same_.group(1))) if a in pset)
            if len(names_) >= 2:
                checks.same.append(names_)
    return checks


def _narrow(dtypes: dict[str, set[str]], checks: _Checks) -> None:
    """What the checks do to the dtypes the switches allow."""
    for arg, types in checks.refused.items():
        if arg in dtypes:
            dtypes[arg] -= types
    for arg, types in checks.exact.items():
        if arg in checks.listed and arg in dtypes and dtypes[arg] < types:
            # a check listing the dtypes an argument may have admits them all; a switch over fewer is
            # a path for some of them (index.Tensor's fast path for int64 and int32 indices)
            dtypes[arg] = set(types)
            continue
        # a check for one dtype (an index must be int64) narrows what the switches allow
        dtypes[arg] = set(types) if arg not in dtypes else (dtypes[arg] & types or set(types))


def _moves_bytes(code: str) -> bool:
    """A kernel that copies or sets bytes (memcpy, memset), or never reads an element as a C++ type:
    with no switch, it takes any dtype."""
    return (re.search(r"\bmemcpy\s*\(|\bmemmove\s*\(|\bmemset\s*\(|element_size\(\)", code) is not None
            or (re.search(r"data_ptr\s*<", code) is None and re.search(r"\b\w+_out\s*\(", code) is None))


def _int_as_float(code: str, scope: list[str]) -> bool:
    """True division: the kernel's common dtype of integer (or bool) inputs is float32
    (`isFloatingType(a) ? a : ScalarType::Float`, or a helper of its file that returns Float last)."""
    return (re.search(r"isFloatingType\((?:[^()]|\([^()]*\))*\)\s*\?\s*[^:;?]+:\s*[\w:]*ScalarType::Float\b", code)
            is not None
            or any("isFloatingType" in chunk and re.search(r"return\s+[\w:]*ScalarType::Float\s*;\s*\}\s*$", chunk.strip())
                   for chunk in scope[1:]))


def kernel_facts(kernel: str, sources: dict[str, str], helpers: dict[str, tuple[list[str], str]],
                 switches: SwitchSets, fallback: KernelFacts | None = None) -> KernelFacts:
    """The facts of the kernel function ``kernel`` (``torch::executor::gelu_out``): ``sources`` are the
    kernel folder's files (path → text, comments stripped), ``helpers`` the util and pattern
    files' functions (:func:`helper_index`)."""
    fname = kernel.rsplit("::", 1)[-1]
    where = _definition(fname, sources)
    if where is None:
        return KernelFacts(kernel=kernel, file=None, unknown=f"no definition of {fname} found")
    path, text, params, body = where
    pset = set(params)
    scope = _scope(fname, text, body, helpers)
    code = "\n".join(scope)
    locals_ = _locals(scope, pset)
    found = _read_switches(code, switches, locals_, pset)
    dtypes = found.args
    _read_case_switches(code, text, pset, dtypes)
    _read_branches(code, dtypes)
    _read_supported(code, pset, dtypes)
    checks = _read_checks(code, locals_, pset)
    _narrow(dtypes, checks)
    moves_bytes = not found.any() and _moves_bytes(code)
    int_as_float = (found.common is not None or found.compute is not None) and _int_as_float(code, scope)
    facts = KernelFacts(
        kernel=kernel, file=path, any_dtype=moves_bytes, params=tuple(params), int_as_float=int_as_float,
        dtypes=tuple((a, tuple(sorted(t))) for a, t in sorted(dtypes.items())),
        common=tuple(sorted(found.common)) if found.common is not None else None,
        compute=tuple(sorted(found.compute)) if found.compute is not None else None,
        ranks=tuple((a, tuple(sorted(r))) for a, r in sorted(checks.ranks.items())),
        same_dtype=tuple(dict.fromkeys(checks.same)), unattributed=tuple(dict.fromkeys(found.unattributed)),
        unknown=None if found.any() or moves_bytes else "no dtype switch found in the kernel or its file's helpers")
    if fallback is not None and re.search(r"\bportable\b|torch::executor::native::\w+_out", body):
        facts = _union(facts, fallback)
    return facts


def _union(opt: KernelFacts, portable: KernelFacts) -> KernelFacts:
    """An optimized kernel that falls back to the portable one accepts what either accepts; the
    argument checks are the optimized kernel's own."""
    if opt.unknown and portable.unknown is None:
        return portable.__class__(**{**portable.__dict__, "kernel": opt.kernel, "file": opt.file})
    dtypes = {a: set(t) for a, t in opt.dtypes}
    names = dict(zip(portable.params, opt.params))
    for a, t in portable.dtypes:
        dtypes.setdefault(names.get(a, a), set()).update(t)

    def merge(x, y):
        return None if x is None and y is None else tuple(sorted(set(x or ()) | set(y or ())))

    return KernelFacts(kernel=opt.kernel, file=opt.file, params=opt.params,
                       dtypes=tuple((a, tuple(sorted(t))) for a, t in sorted(dtypes.items())),
                       common=merge(opt.common, portable.common), compute=merge(opt.compute, portable.compute),
                       ranks=opt.ranks, same_dtype=opt.same_dtype, unattributed=opt.unattributed, unknown=opt.unknown,
                       int_as_float=opt.int_as_float or portable.int_as_float)


# --- a release ---------------------------------------------------------------------------------------


def registry_kernels(text: str, name: str) -> list[tuple[str, str]]:
    """(operator ``aten::gelu.out``, kernel function) of each entry of a kernel yaml."""
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise BadInput(f"not YAML: {exc}", file=name) from None
    if not isinstance(data, list):
        raise BadInput("a kernel registry is a list of `- op:` entries", file=name)
    out = []
    for entry in data:
        if not isinstance(entry, dict) or not ("op" in entry or "func" in entry):
            continue
        # `op: add.out` names an ATen operator; `func: NAME(...) -> ...` declares its schema itself
        op = str(entry["op"]) if "op" in entry else str(entry["func"]).split("(", 1)[0].strip()
        qual = op if "::" in op else f"aten::{op}"
        kernels = entry.get("kernels") or []
        kname = next((k.get("kernel_name") for k in kernels if isinstance(k, dict) and k.get("kernel_name")), None)
        out.append((qual, str(kname or "")))
    return out


def edge_constraints(text: str, name: str = EDGE_YAML) -> dict[str, dict]:
    """The dtypes the edge dialect's verifier lets each operator take (``exir/dialects/edge/edge.yaml``,
    which ``to_edge`` checks every call against): operator → ``{"alias": {T0: [dtypes]},
    "constraints": [{argument: alias}]}``. A call is valid when one constraint holds, each alias
    standing for one dtype across the arguments that share it."""
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise BadInput(f"not YAML: {exc}", file=name) from None
    out: dict[str, dict] = {}
    for entry in data or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("func"), str):
            continue
        alias = {k: sorted(SCALAR_TYPES[t] for t in v if t in SCALAR_TYPES)
                 for k, v in (entry.get("type_alias") or {}).items() if isinstance(v, list)}
        constraints = [dict(c) for c in entry.get("type_constraint") or [] if isinstance(c, dict)]
        if alias and constraints:
            out[entry["func"]] = {"alias": alias, "constraints": constraints}
    return out


def mixed_type_ops(text: str) -> list[str]:
    """The operators whose mixed-dtype calls ``to_edge`` casts to their promoted dtype first
    (``RemoveMixedTypeOperators``' allow list: ``torch.ops.aten.add.Tensor: …``)."""
    found = []
    for name, overload in re.findall(r"torch\.ops\.aten\.(\w+)\.(\w+)\s*:", strip_comments(text)):
        found.append(f"aten::{name}" if overload == "default" else f"aten::{name}.{overload}")
    return list(dict.fromkeys(found))


def release_facts(read: Read, listdir: ListDir) -> dict:
    """Everything opgov records about an ExecuTorch release, from its source tree: ``portable`` and
    ``optimized`` (the kernel registries' operators), ``served`` (prim ops), ``torch`` (its pin) and
    ``kernels`` (operator → :class:`KernelFacts` as JSON; the optimized registry's under
    ``optimized_kernels``), ``edge`` (:func:`edge_constraints`: what ``to_edge`` lets through) and
    ``mixed_types`` (:func:`mixed_type_ops`: the calls ``to_edge`` casts to one dtype first)."""
    from opgov.formats.runtime_files import prim_ops, pytorch_pin

    portable_yaml = read(PORTABLE_YAML)
    if portable_yaml is None:
        raise BadInput(f"no {PORTABLE_YAML}: not an ExecuTorch source tree")
    portable = registry_kernels(portable_yaml, PORTABLE_YAML)
    optimized_yaml = read(OPTIMIZED_YAML)
    optimized = registry_kernels(optimized_yaml, OPTIMIZED_YAML) if optimized_yaml else []
    prim = read(PRIM_OPS)
    pin = read(PIN)
    switches = SwitchSets(read(SWITCH_HEADER))

    def folder(path: str) -> dict[str, str]:
        out = {}
        for name in listdir(path):
            if name.endswith((".cpp", ".h")):
                text = read(f"{path}/{name}")
                if text is not None:
                    out[f"{path}/{name}"] = strip_comments(text)
        return out

    util = {**folder(f"{PORTABLE_DIR}/util"), **folder(f"{PORTABLE_DIR}/pattern")}
    defines = {}
    for text in util.values():  # DEFINE_UNARY_UFUNC_*(exp_out, std::exp): a kernel written by a macro
        defines.update({k: v for k, v in switch_macros(text).items() if k.startswith("DEFINE_")})
    portable_src = {p: expand_defines(t, defines) for p, t in folder(PORTABLE_DIR).items() if p.endswith(".cpp")}
    helpers = helper_index(util)
    facts = {op: kernel_facts(k, portable_src, helpers, switches) for op, k in portable}
    opt_all = folder(OPTIMIZED_DIR) if optimized else {}
    opt_src = {p: t for p, t in opt_all.items() if p.endswith(".cpp")}
    opt_helpers = {**helpers, **helper_index({p: t for p, t in opt_all.items() if not p.endswith(".cpp")})}
    opt_facts = {op: kernel_facts(k, opt_src, opt_helpers, switches, fallback=facts.get(op)) for op, k in optimized}
    try:
        torch = pytorch_pin(pin, PIN) if pin else None
    except BadInput:
        torch = None
    return {
        "torch": torch,
        "served": list(prim_ops(prim, PRIM_OPS)) if prim else [],
        "portable": [op for op, _ in portable],
        "optimized": [op for op, _ in optimized],
        "kernels": {op: f.to_json() for op, f in facts.items()},
        "optimized_kernels": {op: f.to_json() for op, f in opt_facts.items()},
        "edge": edge_constraints(edge) if (edge := read(EDGE_YAML)) else {},
        "mixed_types": mixed_type_ops(mixed) if (mixed := read(MIXED_TYPES)) else [],
    }


def directory_reader(root):
    """(read, listdir) over a source tree on disk."""
    from pathlib import Path

    base = Path(root)

    def read(path: str) -> str | None:
        p = base / path
        try:
            return p.read_text(encoding="utf-8", errors="replace") if p.is_file() else None
        except OSError:
            return None

    def listdir(path: str) -> list[str]:
        p = base / path
        return sorted(x.name for x in p.iterdir() if x.is_file()) if p.is_dir() else []

    return read, listdir
