"""The one way formats read a file, and the one way they name the place of a problem."""

from __future__ import annotations

import pytest

from opgov.core.errors import BadInput, SchemaParseError
from opgov.core.names import canonical
from opgov.formats.files import context, read_text, text_of
from opgov.formats.rules import load_rules_file


def test_read_text_reads_utf8_and_keeps_line_endings_when_asked(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_bytes("x: é\r\ny: 1\r\n".encode())
    assert read_text(path) == "x: é\ny: 1\n"
    assert read_text(path, exact=True) == "x: é\r\ny: 1\r\n"


@pytest.mark.parametrize(("make", "says"), [
    (lambda p: None, "no such file"),
    (lambda p: p.mkdir(), "is a directory"),
    (lambda p: p.write_bytes(b"\xff\xfe\x00r\x00u"), "not UTF-8 text"),
    (lambda p: p.write_bytes(b"\x7fELF\x00\x00\x00"), "binary file"),
])
def test_an_unreadable_file_is_one_line_naming_it(tmp_path, make, says):
    path = tmp_path / "rules.yaml"
    make(path)
    for read in (read_text, load_rules_file):
        with pytest.raises(BadInput) as err:
            read(path)
        message = str(err.value)
        assert message.startswith(f"{path}:") and says in message and "\n" not in message
        assert message.split(": ", 1)[0] in (str(path), f"{path}:1")  # the file, or the line of a NUL


@pytest.mark.parametrize("data", [b"\xff\xfe\x00r\x00u", b"\x7fELF\x00\x00\x00", b"a: 1\nb: \x00\n", b" \n\n", b"x: 1\n"])
def test_text_in_memory_is_checked_as_a_file_is(tmp_path, data):
    """An upload to the service (text_of) gets the answer a local run gives for the same bytes."""
    path = tmp_path / "a.yaml"
    path.write_bytes(data)
    try:
        expected = read_text(path)
    except BadInput as err:
        with pytest.raises(BadInput) as raised:
            text_of(data, str(path))
        assert str(raised.value) == str(err)
    else:
        assert text_of(data, str(path)) == expected


def test_context_names_file_and_line_of_an_error_that_names_none():
    with pytest.raises(BadInput) as err:
        with context("ops.txt", 7, prefix="model 'm': "):
            canonical("not a name!")
    assert (err.value.file, err.value.line) == ("ops.txt", 7)
    assert str(err.value).startswith("ops.txt:7: model 'm': 'not a name!' is not an operator name")


def test_context_keeps_the_kind_of_error_and_a_place_already_named():
    with pytest.raises(SchemaParseError) as err:
        with context("a.yaml", 3):
            raise SchemaParseError("schema 'f(': unbalanced")
    assert str(err.value) == "a.yaml:3: schema 'f(': unbalanced"
    with pytest.raises(BadInput) as err:
        with context("outer.yaml", 1):
            raise BadInput("inner problem", file="inner.yaml", line=9)
    assert str(err.value) == "inner.yaml:9: inner problem"
