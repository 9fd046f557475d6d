"""The model corpus: where it is (``--models``, ``OPGOV_MODELS_DIR``, else the corpora opgov ships),
how a page names it, and the models it holds."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from opgov.core.errors import BadInput

if TYPE_CHECKING:
    from opgov.results.pages import ModelEntry


SHIPPED_CORPORA = "shipped"  # `--models shipped`: every corpus opgov ships


def corpus_files(models: str) -> list[Path]:
    """A corpus file or a ``.pt2`` archive, or every ``*_ops.json`` and ``*.pt2`` of a folder; or,
    when no such file or folder exists, a corpus by name: ``shipped`` (every corpus opgov ships)
    or a corpus's name (``torchvision``: ``torchvision_ops.json`` of ``OPGOV_MODELS_DIR``, else of
    the shipped corpora)."""
    from opgov.formats.corpus import resolve_corpus_path
    from opgov.resources import shipped_models_dir

    path = Path(models)
    if not path.exists() and models == SHIPPED_CORPORA and shipped_models_dir() is not None:
        path = shipped_models_dir()
    elif not path.exists() and "/" not in models and not models.endswith((".json", ".pt2")):
        return [resolve_corpus_path(models, corpora_dir())]
    if path.is_dir():
        files = sorted(path.glob("*_ops.json")) + sorted(path.glob("*.pt2"))
        if not files:
            raise BadInput(f"{models}: a folder without corpus files (*_ops.json) or .pt2 archives")
        return files
    if not path.is_file():
        raise BadInput(f"{models}: no such corpus file or folder")
    return [path]


def load_corpora(models: str):
    """The models of ``models`` (:func:`corpus_files`), merged: each corpus file's models, and each
    ``.pt2`` archive as one model of the corpus ``pt2`` (:func:`opgov.formats.corpus.pt2_corpus`)."""
    from opgov.core.corpus import merge_models
    from opgov.formats.corpus import load_corpus, pt2_corpus

    files = corpus_files(models)
    archives = [f for f in files if f.suffix == ".pt2"]
    corpora = [load_corpus(f) for f in files if f.suffix != ".pt2"]
    if archives:
        corpora.append(pt2_corpus(archives))
    return merge_models(corpora)


def corpora_dir() -> Path | None:
    """Where bare corpus names (``torchvision#resnet18``) are looked up: ``OPGOV_MODELS_DIR``, else
    the corpora opgov ships."""
    from opgov.resources import shipped_models_dir

    value = os.environ.get("OPGOV_MODELS_DIR")
    return Path(value) if value and value != NO_CORPUS else shipped_models_dir()


NO_CORPUS = "none"  # OPGOV_MODELS_DIR=none: no model corpus (not even the shipped one) as evidence


def models_location(models: str | None = None) -> str | None:
    """The model corpus a page, the queue or the coverage matrix reads: ``models`` if given, else
    ``OPGOV_MODELS_DIR`` (``none``: no corpus), else the corpora opgov ships: the default evidence
    when none is configured."""
    if models:
        return models
    if os.environ.get("OPGOV_MODELS_DIR") == NO_CORPUS:
        return None
    found = corpora_dir()
    return str(found) if found else None


def corpus_label(location: str) -> str:
    """How a page or a report names the corpus at ``location`` without a folder of the machine:
    ``opgov's shipped corpora (torchvision, transformers)``, or the file's or folder's own name."""
    from opgov.formats.corpus import available_corpora
    from opgov.resources import shipped_models_dir

    shipped = shipped_models_dir()
    path = Path(location)
    if location == SHIPPED_CORPORA or (shipped is not None and path.is_dir() and path.resolve() == shipped.resolve()):
        return f"opgov's shipped corpora ({', '.join(available_corpora(shipped)) if shipped else 'none'})"
    if path.is_dir():
        return f"{path.name or location} ({', '.join(available_corpora(path)) or 'no corpus files'})"
    return path.name or location


def load_models(models: str | None) -> list[ModelEntry]:
    """The models of the corpus at ``models`` (:func:`load_corpora`) as the pages list them; none for None."""
    if not models:
        return []
    from opgov.results.pages import ModelEntry

    merged = load_corpora(models)
    return [ModelEntry(key=key, family=m.family, exported_ops=list(m.exported_ops),
                       core_aten_ops=list(m.core_aten_ops)) for key, m in merged.items()]
