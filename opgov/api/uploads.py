"""Uploaded files: bounded in size (413; the whole request body is bounded before any route by
api/limits.py) and read into memory once (the part Starlette spooled is closed at once, and a
plain ASCII file is read from its bytes, never decoded into a second copy). Each reader of :mod:`opgov.formats`
takes content with the name its messages give it, so an upload is read as a local file is, checked
in the same words (not UTF-8, binary, empty: 400), and named as the client named it."""

from __future__ import annotations

import os
import re

from fastapi import HTTPException, UploadFile

from opgov.formats.files import Content


def read_upload(upload: UploadFile, limit: int, *, default: str = "upload") -> Content:
    """The bytes of an upload, named as the client named it (:func:`shown_name`); 413 past
    ``limit`` bytes. The reader it is given to checks the rest."""
    data = upload.file.read(limit + 1)
    upload.file.close()  # its spooled copy (in memory up to 1 MiB) is not needed again
    if len(data) > limit:
        raise HTTPException(413, f"{safe_name(upload, default)} is larger than {limit} bytes")
    return Content(data, shown_name(upload))


def shown_name(upload: UploadFile) -> str:
    """The file name the client sent, as messages and results show it (printable characters only)."""
    name = "".join(ch for ch in (upload.filename or "") if ch.isprintable())[:300]
    return name or "upload"


def safe_name(upload: UploadFile, default: str = "upload") -> str:
    """The file name the client sent, reduced to letters, digits and ``._-`` (a name safe to put in
    a path or a message about its size), or ``default``."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(upload.filename or default)) or default
