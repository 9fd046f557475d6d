"""Where the files opgov ships live: the Alembic migrations and the data files a command can load
by name (the 2023 review's decisions, the export-composites rules, torch's facts per release, the
model corpora).

In the repository they stay at the top level (``migrations/``, ``data/``); a wheel carries them
inside the package as ``opgov/_migrations`` and ``opgov/_data`` (setup.py maps the folders). Both
lookups try the installed place first, then the checkout, so an editable install and a wheel
install find the same files.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent

# name → path under data/ (the names `opgov decisions load NAME` / `opgov decomps load NAME` accept)
SHIPPED_DATA = {
    "core-aten-review-2023": "decisions/core-aten-review-2023.yaml",
    "export-composites": "decomps/export-composites.yaml",
}
# the names of the shipped decisions files (`opgov decisions load NAME`, a server's `shipped`)
SHIPPED_DECISIONS = tuple(key for key, relative in SHIPPED_DATA.items() if relative.startswith("decisions/"))


def _first(*candidates: Path) -> Path:
    for candidate in candidates:
        if candidate.exists():
            return candidate
    return candidates[0]


def migrations_dir() -> Path:
    """The Alembic script directory (holding env.py and versions/)."""
    return _first(_PACKAGE / "_migrations", _CHECKOUT / "migrations")


def shipped_data(name: str) -> Path | None:
    """The shipped data file called ``name`` (``core-aten-review-2023``, with or without
    ``.yaml``, or its repository path ``data/decisions/core-aten-review-2023.yaml``), else None."""
    key = shipped_name(name)
    if key is None:
        return None
    relative = SHIPPED_DATA[key]
    path = _first(_PACKAGE / "_data" / relative, _CHECKOUT / "data" / relative)
    return path if path.is_file() else None


def shipped_name(name: str) -> str | None:
    """The key of the shipped data file ``name`` names (as :func:`shipped_data` reads it), else None."""
    for key, relative in SHIPPED_DATA.items():
        if name in (key, f"{key}.yaml", f"data/{relative}"):
            return key
    return None


def data_argument(file: str) -> str:
    """A FILE argument as given, or, when no such file exists and it names a shipped data file,
    that file's path: `opgov decisions load core-aten-review-2023` works from any directory and
    any install."""
    if Path(file).exists():
        return file
    shipped = shipped_data(file)
    return str(shipped) if shipped is not None else file


def shipped_torch_facts() -> dict[str, Path]:
    """The torch facts opgov ships (``data/torch/torch-<release>.json``, written by
    ``scripts/build_torch_facts.py`` from that torch release): release → file."""
    folder = _first(_PACKAGE / "_data" / "torch", _CHECKOUT / "data" / "torch")
    if not folder.is_dir():
        return {}
    return {path.stem.removeprefix("torch-"): path for path in sorted(folder.glob("torch-*.json"))}


def shipped_models_dir() -> Path | None:
    """The model corpora opgov ships (``data/models/<name>_ops.json``: the ATen operators of 43
    real torchvision and transformers models, exported with torch.export), else None."""
    folder = _first(_PACKAGE / "_data" / "models", _CHECKOUT / "data" / "models")
    return folder if folder.is_dir() else None


def shipped_runtimes(name: str) -> Path | None:
    """What opgov ships about the releases of the runtime ``name`` (``executorch``: the operators
    each release serves outside its kernel yaml, the PyTorch release it follows), else None."""
    relative = f"runtimes/{name}.json"
    if not name.isidentifier():
        return None
    path = _first(_PACKAGE / "_data" / relative, _CHECKOUT / "data" / relative)
    return path if path.is_file() else None


def shipped_runtime_release(name: str, version: str) -> Path | None:
    """The kernel facts opgov ships for one release of the runtime ``name``
    (``data/runtimes/executorch/1.3.0.json``, written by scripts/build_runtime_data.py), else None."""
    if not name.isidentifier() or not all(part.isalnum() for part in version.split(".")):
        return None
    relative = f"runtimes/{name}/{version}.json"
    path = _first(_PACKAGE / "_data" / relative, _CHECKOUT / "data" / relative)
    return path if path.is_file() else None
