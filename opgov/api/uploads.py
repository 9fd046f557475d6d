"""Uploaded files: bounded in size (413), text only (400), kept in a private temporary folder
for the duration of the request."""

from __future__ import annotations

import os
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from fastapi import HTTPException, Request, UploadFile

from opgov.core.errors import BadInput


def check_length(request: Request) -> None:
    """Refuse (413) a request whose declared body is larger than the server allows, before reading it."""
    limit = request.app.state.config.max_upload_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"the upload is {int(declared)} bytes; this server accepts at most {limit}")


def read_text(upload: UploadFile, limit: int) -> tuple[str, str]:
    """(a safe file name, the text) of an upload; 413 past ``limit`` bytes, 400 for binary data."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(upload.filename or "upload.yaml")) or "upload.yaml"
    data = upload.file.read(limit + 1)
    if len(data) > limit:
        raise HTTPException(413, f"{name} is larger than {limit} bytes")
    if b"\0" in data:
        raise BadInput(f"{name}: a binary file, not text")
    try:
        return name, data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadInput(f"{name}: not UTF-8 text (byte {err.start})") from None


@contextmanager
def saved(files: dict[str, tuple[str, str]]) -> Iterator[dict[str, Path]]:
    """Write ``{key: (name, text)}`` into a private temporary folder; yields ``{key: path}``."""
    with tempfile.TemporaryDirectory(prefix="opgov-upload-") as folder:
        paths = {}
        for key, (name, text) in files.items():
            path = Path(folder) / key / name
            path.parent.mkdir()
            path.write_text(text, encoding="utf-8")
            paths[key] = path
        yield paths
