"""GitHub Actions workflow commands (``::error file=…,line=…,title=…::message``), escaped as
the runner expects: every renderer of ``--format github`` writes its annotations through
:func:`annotation`."""

from __future__ import annotations


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, **properties: object) -> str:
    """One workflow command; properties that are None are left out."""
    props = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items()
                     if value is not None)
    return f"::{level}{' ' + props if props else ''}::{_escape_data(message)}"
