"""Reading model corpora and the other ways of naming the operators a model uses.

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
from pathlib import Path

from opgov.core.corpus import MAX_MODEL_OPERATORS, STAGES, Corpus, ModelOps
from opgov.core.errors import BadInput
from opgov.core.names import canonical
from opgov.formats.files import context, read_text, text_of

__all__ = ["available_corpora", "corpus_name", "list_ops", "load_corpus", "parse_corpus", "pt2_corpus",
           "resolve_corpus_path", "resolve_model_ops"]


def corpus_name(path: Path) -> str:
    stem = path.stem
    return stem[: -len("_ops")] if stem.endswith("_ops") else stem


def load_corpus(path: str | Path) -> Corpus:
    """Load one corpus file; :class:`BadInput` names the file (and line or model) when malformed."""
    path = Path(path)
    return _corpus(read_text(path), str(path))


def parse_corpus(content: str | bytes, name: str) -> Corpus:
    """:func:`load_corpus` of a file already in memory; messages name it, and the corpus is named
    after, ``name``."""
    return _corpus(text_of(content, name), name)


def _corpus(text: str, name: str) -> Corpus:
    path = Path(name)
    data = _json(text, name)
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise BadInput("not a corpus: expected {\"source\": ..., \"models\": {NAME: {...}}}", file=name)
    corpus = corpus_name(path)
    models: dict[str, ModelOps] = {}
    for model, entry in data["models"].items():
        if not isinstance(entry, dict):
            raise BadInput(f"model {model!r} is not an object", file=name)
        ops = {}
        if "exported_ops" not in entry and "core_aten_ops" not in entry:
            raise BadInput(f"model {model!r}: needs 'exported_ops' or 'core_aten_ops' (or both)", file=name)
        for key in ("exported_ops", "core_aten_ops"):
            if key not in entry:
                continue
            raw = entry.get(key)
            if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
                raise BadInput(f"model {model!r}: {key!r} must be a list of operator names", file=name)
            with context(name, prefix=f"model {model!r}: "):
                ops[key] = _dedupe(canonical(x) for x in raw)
        # a corpus of lowered programs has only core_aten_ops: they are what was exported, too
        ops.setdefault("exported_ops", ops.get("core_aten_ops", ()))
        ops.setdefault("core_aten_ops", ops["exported_ops"])
        models[model] = ModelOps(name=model, family=str(entry.get("family", "")), corpus=corpus, **ops)
    return Corpus(name=corpus, source=str(data.get("source", "")), path=name, models=models)


def pt2_corpus(archives) -> Corpus:
    """``.pt2`` archives as a corpus named ``pt2``: each archive is a model named after its file,
    whose operators are those of its programs (opgov's own reader, no torch) at both stages: a
    program saved after ``run_decompositions()`` is what a runtime receives."""
    from opgov.formats.pt2 import read_pt2

    models: dict[str, ModelOps] = {}
    for archive in archives:
        ops = _dedupe(read_pt2(Path(archive)))
        models[Path(archive).stem] = ModelOps(name=Path(archive).stem, family="pt2", corpus="pt2",
                                              exported_ops=ops, core_aten_ops=ops)
    return Corpus(name="pt2", source="torch.export archives", path=str(Path(archives[0]).parent), models=models)


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
        from opgov.resources import shipped_models_dir

        shipped = shipped_models_dir()
        where = ("opgov's shipped corpora" if shipped is not None and corpora_dir.resolve() == shipped.resolve()
                 else str(corpora_dir))
        raise BadInput(f"no corpus named {spec!r} in {where}{hint}")
    raise BadInput(f"no corpus file {spec!r}" + ("" if corpora_dir else
                                                 " (to name a corpus without its path, set OPGOV_MODELS_DIR "
                                                 "to the folder of *_ops.json files)"))


def available_corpora(corpora_dir: Path) -> list[str]:
    return sorted(corpus_name(p) for p in corpora_dir.glob("*_ops.json"))


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
    return _list_ops(read_text(path), str(path))


def list_ops(content: str | bytes, name: str) -> list[str]:
    """The operators of a list (a JSON list of names, or one per line) already in memory, as
    :func:`resolve_model_ops` reads a list file; messages name it ``name``."""
    return _list_ops(text_of(content, name), name)


def _list_ops(text: str, name: str) -> list[str]:
    stripped = text.lstrip()
    if stripped.startswith("{"):
        raise BadInput("a JSON object, not a list: for a corpus, name a model as FILE#model", file=name)
    if stripped.startswith("["):
        data = _json(text, name)
        if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
            raise BadInput("the JSON list must hold operator names (strings)", file=name)
        with context(name):
            found = list(_dedupe(canonical(x) for x in data))
        if len(found) > MAX_MODEL_OPERATORS:
            raise BadInput(_TOO_MANY, file=name)
        return found
    from opgov.formats.files import iter_lines

    names: dict[str, None] = {}  # each once, as read: a list of 10⁵ lines keeps no second copy of them
    for number, line in enumerate(iter_lines(text), start=1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        with context(name, number):
            names[canonical(content)] = None
        if len(names) > MAX_MODEL_OPERATORS:  # refused as read: the rest is never built
            raise BadInput(_TOO_MANY, file=name, line=number)
    return list(names)


_TOO_MANY = (f"names more than {MAX_MODEL_OPERATORS:,} distinct operators (PyTorch declares about 3,700 in all): "
             "not an operator list opgov reads")


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    data: dict[str, object] = {}
    for key, value in pairs:
        if key in data:
            raise ValueError(f"duplicate key {key!r}")
        data[key] = value
    return data


def _json(text: str, name: str):
    """The JSON value of ``text``; a duplicate key, nesting Python cannot follow or malformed JSON
    is one :class:`BadInput` naming ``name``."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise BadInput(f"not valid JSON: {exc.msg}", file=name, line=exc.lineno) from None
    except ValueError as exc:  # a duplicate key
        raise BadInput(f"not valid JSON: {exc}", file=name) from None
    except RecursionError:
        raise BadInput("not valid JSON: nested too deeply", file=name) from None


def _dedupe(names) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))
