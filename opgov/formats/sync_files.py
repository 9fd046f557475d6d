"""The sync bot's files on this machine (``opgov sync --write``): the tags.yaml beside the yaml, the
lock and atomic replacement of both files (:mod:`opgov.formats.atomic`), and the intent a write
leaves until its event is committed, so a run stopped in between is found by the next."""

from __future__ import annotations

import os
import re

from opgov.core.errors import BadInput


def tags_beside(path: str) -> str | None:
    """The tags.yaml beside ``path`` (the one torchgen reads), if there is one."""
    beside = os.path.join(os.path.dirname(path) or ".", "tags.yaml")
    return beside if os.path.isfile(beside) else None


def write_synced(contents: list[tuple[str, str]], path: str) -> None:
    """Write a sync's new texts (``[(file, text)]``, tags.yaml first) atomically: both files are
    prepared (locked, written, synced) before either is replaced, so a failure leaves both as
    they were; tags.yaml is replaced first: a file whose tags are undeclared must never exist,
    even if the process dies between the two renames. An error is one line naming the file."""
    from opgov.formats.atomic import replace_files

    try:
        replace_files(contents)
    except OSError as err:
        where = err.filename or path
        raise BadInput(f"cannot write: {err.strerror or err}", file=str(where)) from None


INTENT_SUFFIX = ".sync-intent"


def record_intent(path: str, new_text: str, write_id: str | None = None) -> None:
    """Before a sync's rename: ``path.sync-intent`` records the SHA-256 the file will hold and the
    write's id (the one its ``yaml.sync`` event carries), synced, so a run stopped after the rename
    and before its event committed is found by the next (:func:`installed_by_stopped_run`,
    :func:`_found_installed`), whatever an earlier sync wrote."""
    from opgov.formats.atomic import atomic_write_text

    line = f"sha256 {sha256_of(new_text.encode('utf-8'))}" + (f" write {write_id}" if write_id else "")
    try:
        atomic_write_text(path + INTENT_SUFFIX, line + "\n")
    except OSError as err:
        raise BadInput(f"cannot write: {err.strerror or err}", file=path + INTENT_SUFFIX) from None


def new_write_id() -> str:
    """A sync write's id: recorded in its intent and its event, so the next run tells this write
    from an earlier one that wrote the same bytes."""
    import secrets

    return secrets.token_hex(16)


def installed_by_stopped_run(path: str, data: bytes | str) -> tuple[str, str | None] | None:
    """(the SHA-256, the write's id) a stopped sync's intent recorded, when ``path`` (whose content is
    ``data``) holds that SHA-256: that run installed the file and may not have logged it (the id is
    None in an intent written before writes had ids). None otherwise."""
    try:
        with open(path + INTENT_SUFFIX, encoding="ascii") as handle:
            words = handle.read().split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(words) == 2 and words[0] == "sha256":
        digest, write_id = words[1], None
    elif len(words) == 4 and words[0] == "sha256" and words[2] == "write" and re.fullmatch(r"[0-9a-f]{32}", words[3]):
        digest, write_id = words[1], words[3]
    else:
        return None
    data = data if isinstance(data, bytes) else data.encode("utf-8")
    return (digest, write_id) if sha256_of(data) == digest else None


def drop_intent(path: str) -> None:
    """Once the sync's event is committed (or there was nothing to log): its intent goes."""
    try:
        os.unlink(path + INTENT_SUFFIX)
    except FileNotFoundError:
        pass


def hold_lock(path: str):
    """Take ``path``'s lock as :func:`write_synced` takes it (an error is its one line); release it
    with ``.abort()``."""
    from opgov.formats.atomic import prepare_write

    try:
        return prepare_write(path, b"")
    except OSError as err:
        raise BadInput(f"cannot write: {err.strerror or err}", file=str(err.filename or path)) from None


def sha256_of(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()
