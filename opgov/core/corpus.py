"""Which operators models use, and whether a registry (and a runtime) can run them.

Corpus files
------------
A corpus is the JSON of ``../shared/models/`` (``torchvision_ops.json``)::

    {"source": "...", "models": {NAME: {"family": "...",
                                        "exported_ops": ["aten::conv2d", ...],
                                        "core_aten_ops": ["aten::convolution", ...]}}}

``exported_ops`` are the operators of the program torch.export produced; ``core_aten_ops`` the
same after ``run_decompositions()`` with PyTorch's default table. Names are canonicalized on
load (``aten::relu.default`` → ``aten::relu``). A corpus is named after its file:
``torchvision_ops.json`` is ``torchvision``.

What a model uses (``check-model OPS``)
---------------------------------------
:func:`resolve_model_ops` accepts

- ``CORPUS#model``: a model of a corpus; CORPUS is a path to a corpus file or a bare name looked
  up as ``<corpora_dir>/<name>_ops.json``. It gives the model's ``exported_ops``; append
  ``@core-aten`` (``torchvision#resnet18@core-aten``) for its operators after decomposition;
- a file holding a JSON list of operator names;
- a file with one operator per line (blank lines and ``#`` comments ignored).

Names are canonicalized and duplicates dropped, keeping the first occurrence's order.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from opgov.core.errors import BadInput
from opgov.core.names import canonical

STAGES = ("exported", "core-aten")


@dataclass(frozen=True)
class ModelOps:
    """One model of a corpus. ``key`` (``corpus#name``) names it across corpora."""

    name: str
    family: str
    exported_ops: tuple[str, ...]
    core_aten_ops: tuple[str, ...]
    corpus: str = ""

    @property
    def key(self) -> str:
        return f"{self.corpus}#{self.name}" if self.corpus else self.name

    def ops(self, stage: str = "exported") -> tuple[str, ...]:
        return self.exported_ops if stage == "exported" else self.core_aten_ops


@dataclass(frozen=True)
class Corpus:
    name: str
    source: str
    path: str
    models: Mapping[str, ModelOps] = field(compare=False)


def corpus_name(path: Path) -> str:
    stem = path.stem
    return stem[: -len("_ops")] if stem.endswith("_ops") else stem


def _read_text(path: Path) -> str:
    """A corpus or an operator list: one line of :class:`BadInput` naming the file when it is
    missing, a directory, binary or empty (the same words as opgov.formats.files.read_text)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput("no such file", file=str(path)) from None
    except IsADirectoryError:
        raise BadInput("is a directory, expected a file", file=str(path)) from None
    except UnicodeDecodeError as err:
        raise BadInput(f"not UTF-8 text ({err.reason})", file=str(path)) from None
    except OSError as exc:
        raise BadInput(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    if "\x00" in text:
        raise BadInput("a binary file (it holds NUL bytes), expected text", file=str(path))
    if not text.strip():
        raise BadInput("is empty", file=str(path))
    return text


def load_corpus(path: str | Path) -> Corpus:
    """Load one corpus file; :class:`BadInput` names the file (and line or model) when malformed."""
    path = Path(path)
    text = _read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"not valid JSON: {exc.msg}", file=str(path), line=exc.lineno) from exc
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise BadInput("not a corpus: expected {\"source\": ..., \"models\": {NAME: {...}}}", file=str(path))
    name = corpus_name(path)
    models: dict[str, ModelOps] = {}
    for model, entry in data["models"].items():
        if not isinstance(entry, dict):
            raise BadInput(f"model {model!r} is not an object", file=str(path))
        ops = {}
        for key in ("exported_ops", "core_aten_ops"):
            raw = entry.get(key)
            if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
                raise BadInput(f"model {model!r}: {key!r} must be a list of operator names", file=str(path))
            try:
                ops[key] = _dedupe(canonical(x) for x in raw)
            except BadInput as exc:
                raise BadInput(f"model {model!r}: {exc.message}", file=str(path)) from None
        models[model] = ModelOps(name=model, family=str(entry.get("family", "")), corpus=name, **ops)
    return Corpus(name=name, source=str(data.get("source", "")), path=str(path), models=models)


def resolve_corpus_path(spec: str, corpora_dir: Path | None) -> Path:
    """A corpus path, or a bare name looked up as ``<corpora_dir>/<name>_ops.json``."""
    direct = Path(spec)
    if direct.is_file():
        return direct
    if corpora_dir is not None and "/" not in spec and not spec.endswith(".json"):
        for candidate in (corpora_dir / f"{spec}_ops.json", corpora_dir / f"{spec}.json"):
            if candidate.is_file():
                return candidate
        known = available_corpora(corpora_dir)
        hint = f"; known corpora: {', '.join(known)}" if known else ""
        raise BadInput(f"no corpus named {spec!r} in {corpora_dir}{hint}")
    raise BadInput(f"no corpus file {spec!r}" + ("" if corpora_dir else
                                                 " (to name a corpus without its path, set OPGOV_MODELS_DIR "
                                                 "to the folder of *_ops.json files)"))


def available_corpora(corpora_dir: Path) -> list[str]:
    return sorted(corpus_name(p) for p in corpora_dir.glob("*_ops.json"))


def merge_models(corpora: Sequence[Corpus]) -> dict[str, ModelOps]:
    """Every model of ``corpora`` keyed ``corpus#model``, in file order."""
    return {m.key: m for c in corpora for m in c.models.values()}


def resolve_model_ops(spec: str, *, corpora_dir: Path | None = None) -> list[str]:
    """The operators named by ``spec`` (see the module docstring), canonical and deduplicated."""
    spec = spec.strip()
    if "#" in spec:
        corpus_spec, _, model = spec.partition("#")
        stage = "exported"
        if "@" in model:
            model, _, stage = model.partition("@")
            if stage not in STAGES:
                raise BadInput(f"unknown stage {stage!r} in {spec!r} (exported or core-aten)")
        corpus = load_corpus(resolve_corpus_path(corpus_spec, corpora_dir))
        if model not in corpus.models:
            close = difflib.get_close_matches(model, list(corpus.models), n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else f"; it has {len(corpus.models)} models"
            raise BadInput(f"corpus {corpus.name!r} has no model {model!r}{hint}", file=corpus.path)
        return list(corpus.models[model].ops(stage))
    path = Path(spec)
    if not path.exists():
        raise BadInput(f"{spec!r} is neither a file nor CORPUS#model")
    text = _read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("{"):
        raise BadInput("a JSON object, not a list: for a corpus, name a model as FILE#model", file=str(path))
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BadInput(f"not valid JSON: {exc.msg}", file=str(path), line=exc.lineno) from exc
        if not all(isinstance(x, str) for x in data):
            raise BadInput("the JSON list must hold operator names (strings)", file=str(path))
        try:
            return list(_dedupe(canonical(x) for x in data))
        except BadInput as exc:
            raise BadInput(exc.message, file=str(path)) from None
    names: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        try:
            names.append(canonical(content))
        except BadInput as exc:
            raise BadInput(exc.message, file=str(path), line=number) from None
    return list(_dedupe(names))


def _dedupe(names) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


# --------------------------------------------------------------------------------------------
# check-model


@dataclass(frozen=True)
class OpState:
    """What the registry knows about one operator (``deprecating_since`` is UTC)."""

    category: str | None
    lifecycle: str = "active"
    deprecating_since: datetime | None = None
    replacement: str | None = None


@dataclass(frozen=True)
class Finding:
    """One line of a model check. ``date``: when a deprecating operator becomes deprecated."""

    rule: str
    op: str
    message: str
    replacement: str | None = None
    date: datetime | None = None


@dataclass(frozen=True)
class ModelCheck:
    ops: tuple[str, ...]
    errors: tuple[Finding, ...]
    warnings: tuple[Finding, ...]
    notes: tuple[Finding, ...]
    earliest_snapshot: str | None
    snapshots_checked: int

    @property
    def ok(self) -> bool:
        return not self.errors


def check_model(ops: Sequence[str], *, state: Mapping[str, OpState], runtime_ops: set[str] | None = None,
                deprecating_period_days: int = 14,
                snapshots: Sequence[tuple[str, set[str] | frozenset[str]]] = (),
                runtime_label: str = "the runtime", known: Sequence[str] | None = None) -> ModelCheck:
    """Check the operators a model uses against the registry state and a runtime's operators.

    Errors: ``unknown-operator`` (not in ``state``), ``operator-deleted``, ``operator-deprecated``,
    ``runtime-missing`` (not in ``runtime_ops``, when given). Warnings: ``operator-deprecating``
    with the replacement and the UTC date it becomes deprecated (deprecating_since + period);
    ``operator-removed``: not in the latest of ``snapshots`` although never deleted.
    Notes: ``not-core`` (an edge runtime implements core operators). ``earliest_snapshot``: the
    label of the first of ``snapshots`` (ordered oldest first) that has every operator.
    ``known``: every operator name of the registry, for "did you mean" hints on unknown ones
    (default: the keys of ``state``).
    """
    ops = tuple(dict.fromkeys(ops))
    errors: list[Finding] = []
    warnings: list[Finding] = []
    notes: list[Finding] = []
    period = timedelta(days=deprecating_period_days)
    for op in ops:
        st = state.get(op)
        if st is None:
            close = difflib.get_close_matches(op, list(known if known is not None else state), n=3, cutoff=0.8)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            errors.append(Finding("unknown-operator", op, f"{op} is not in the registry{hint}"))
        elif st.lifecycle == "deleted":
            errors.append(Finding("operator-deleted", op, f"{op} has been deleted" + _instead(st),
                                  replacement=st.replacement))
        elif st.lifecycle == "deprecated":
            errors.append(Finding("operator-deprecated", op, f"{op} is deprecated" + _instead(st),
                                  replacement=st.replacement))
        elif st.lifecycle == "deprecating":
            date = _utc(st.deprecating_since) + period if st.deprecating_since else None
            when = f" on {date.date().isoformat()} (UTC)" if date else ""
            warnings.append(Finding("operator-deprecating", op,
                                    f"{op} is being deprecated and becomes deprecated{when}" + _instead(st),
                                    replacement=st.replacement, date=date))
        if st is not None and st.lifecycle != "deleted" and snapshots and op not in snapshots[-1][1]:
            last = next((label for label, have in reversed(snapshots) if op in have), None)
            warnings.append(Finding("operator-removed", op, f"{op} is not in the latest snapshot "
                                    f"({snapshots[-1][0]})" + (f"; last in {last}" if last else "")))
        if st is not None and st.category != "core" and st.lifecycle != "deleted":
            notes.append(Finding("not-core", op, f"{op} is not core ({st.category or 'uncategorized'}): "
                                                 "an edge runtime implementing core ATen may lack it"))
        if runtime_ops is not None and op not in runtime_ops:
            errors.append(Finding("runtime-missing", op, f"{runtime_label} lacks {op}"))
    needed = set(ops)
    earliest = next((label for label, have in snapshots if needed <= have), None)
    return ModelCheck(ops=ops, errors=tuple(errors), warnings=tuple(warnings), notes=tuple(notes),
                      earliest_snapshot=earliest, snapshots_checked=len(snapshots))


def _escape_github(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _instead(st: OpState) -> str:
    return f"; use {st.replacement} instead" if st.replacement else ""


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def render_model_check(check: ModelCheck, fmt: str = "text") -> str:
    """``text``, ``json`` (:class:`opgov.render.decomps.ModelCheckReport`) or ``github``
    (workflow annotations)."""
    if fmt == "json":
        from opgov.render.decomps import ModelCheckReport

        return ModelCheckReport.of(check).model_dump_json(indent=2)
    if fmt == "github":
        lines = [f"::{level} title=opgov {f.rule}::{_escape_github(f.message)}"
                 for level, group in (("error", check.errors), ("warning", check.warnings), ("notice", check.notes))
                 for f in group]
        return "\n".join(lines) + ("\n" if lines else "")
    if fmt != "text":
        raise BadInput(f"unknown format {fmt!r} (text, json or github)")
    lines = [f"{len(check.ops)} operators: {len(check.errors)} error(s), {len(check.warnings)} warning(s), "
             f"{len(check.notes)} note(s)"]
    for label, group in (("error", check.errors), ("warning", check.warnings), ("note", check.notes)):
        lines += [f"{label:<8}{f.message}" for f in group]
    if check.snapshots_checked:
        lines.append(f"earliest snapshot with every operator: {check.earliest_snapshot}" if check.earliest_snapshot
                     else f"none of the {check.snapshots_checked} snapshots has every operator")
    return "\n".join(lines) + "\n"
