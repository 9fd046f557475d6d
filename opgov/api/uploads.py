"""Uploaded files: bounded in size (413; the whole request body is bounded before any route by
api/limits.py), text only (400) unless binary is allowed (a ``.pt2`` archive), kept in a private
temporary folder for the duration of the request. Messages and results name an upload by the
file name the client sent, never by its temporary path."""

from __future__ import annotations

import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from fastapi import HTTPException, UploadFile

from opgov.core.errors import OpgovError


def read_text(upload: UploadFile, limit: int) -> tuple[str, str]:
    """(a safe file name, the text) of an upload; 413 past ``limit`` bytes, 400 for binary, not
    UTF-8 or empty, in the words a local run uses for such a file, naming it as the client did."""
    from opgov.formats.files import text_of

    name = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(upload.filename or "upload.yaml")) or "upload.yaml"
    data = upload.file.read(limit + 1)
    if len(data) > limit:
        raise HTTPException(413, f"{name} is larger than {limit} bytes")
    return name, text_of(data, shown_name(upload))


def shown_name(upload: UploadFile) -> str:
    """The file name the client sent, as messages and results show it (printable characters only)."""
    name = "".join(ch for ch in (upload.filename or "") if ch.isprintable())[:300]
    return name or "upload"


def read_bytes(upload: UploadFile, limit: int) -> tuple[str, bytes]:
    """(a safe file name, the bytes) of an upload that may be binary (a .pt2 archive); 413 past ``limit``."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(upload.filename or "upload")) or "upload"
    data = upload.file.read(limit + 1)
    if len(data) > limit:
        raise HTTPException(413, f"{name} is larger than {limit} bytes")
    return name, data


@contextmanager
def saved(files: dict[str, tuple[str, str | bytes]], shown: dict[str, str] | None = None
          ) -> Iterator[dict[str, Path]]:
    """Write ``{key: (name, text or bytes)}`` into a private temporary folder; yields ``{key: path}``.
    An error naming a temporary path names ``shown[key]`` (default: the file name) instead."""
    with tempfile.TemporaryDirectory(prefix="opgov-upload-") as folder:
        paths = {}
        for key, (name, data) in files.items():
            path = Path(folder) / key / name
            path.parent.mkdir()
            if isinstance(data, bytes):
                path.write_bytes(data)
            else:
                path.write_text(data, encoding="utf-8")
            paths[key] = path
        try:
            yield paths
        except OpgovError as err:
            names = {str(path): (shown or {}).get(key, files[key][0]) for key, path in paths.items()}
            if err.file in names:
                err.file = names[err.file]
            for temporary, name in names.items():
                err.message = err.message.replace(temporary, name)
            raise
