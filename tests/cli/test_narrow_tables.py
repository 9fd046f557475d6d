"""On a narrow terminal (80 or 60 columns) a table never breaks a word: an operator's name (PyTorch
2.13.0's real ones, ``aten::_native_batch_norm_legit_no_training.out``) or any other identifier
is on one line, whole; free text (a rationale, a reason) wraps at spaces. What a pipe gets (tsv)
is the oracle for the words each table must show. A table whose longest words cannot stand side
by side is printed one record a block, as ``psql``'s expanded display is."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.cli.test_pipes import BOX, INVOCATIONS, db, executorch_registries  # noqa: F401 - fixtures

# every command that prints a rich table (``runtimes coverage`` writes plain text, never wrapped)
COMMANDS = {**INVOCATIONS, "proposals list": ["proposals", "list"]}


def shown(url: str, argv: list[str], columns: int, fmt: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("OPGOV_FORCE_TTY", "COLUMNS")}
    if fmt == "table":
        env["OPGOV_FORCE_TTY"] = "1"  # a terminal's table, as a user sees it
    result = subprocess.run([sys.executable, "-m", "opgov", "--db", url, "--actor", "alice", *argv],
                            capture_output=True, text=True, timeout=120, env={**env, "COLUMNS": str(columns)})
    assert result.returncode == 0, result.stderr
    return result.stdout + (result.stderr if fmt == "tsv" else "")  # tsv: its notes too, said as they are


def words(tsv: str) -> set[str]:
    """The words of every cell a pipe gets (the header line left out), long enough to be identifiers
    or words no table cell should split."""
    cells = [cell for line in tsv.splitlines()[1:] if not line.startswith("# ") for cell in line.split("\t")]
    return {w for cell in cells for w in cell.replace("\\t", " ").replace("\\n", " ").split() if len(w) >= 6}


@pytest.mark.parametrize("columns", [80, 60])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_narrow_table_keeps_every_word_whole(db, command, columns):  # noqa: F811
    argv = COMMANDS[command]
    table = shown(db, argv, columns, "table")
    plain = shown(db, argv, 200, "tsv")
    lines = table.splitlines()
    assert lines, f"{command} printed nothing"
    for line in set(lines) - set(plain.splitlines()):  # a table's line (not a line said as it is)
        # wider than the terminal only to keep one word (a path, a name) whole
        assert len(line) <= columns or line.rstrip().rfind(" ") < columns, \
            f"{command}: {line!r} is wider than {columns} columns with more than one word past the edge"
    expected = words(plain)
    names = set(re.findall(r"aten::[A-Za-z0-9_.]*[A-Za-z0-9_]", table)) | {w for w in expected if w.startswith("aten::")}
    assert expected | names, f"{command}: no word to check"
    for word in expected | names:
        assert any(word in line for line in lines), f"{command} at {columns} columns broke {word!r}:\n{table}"


def test_the_longest_real_names_stand_whole_in_ops_list(db):  # noqa: F811
    """The names that broke before: PyTorch 2.13.0's longest overloads, each whole on one line."""
    plain = shown(db, ["ops", "list"], 200, "tsv")
    longest = sorted({line.split("\t")[0] for line in plain.splitlines()[1:]}, key=len)[-20:]
    assert "aten::_native_batch_norm_legit_no_training.out" in plain
    for columns in (80, 60):
        lines = shown(db, ["ops", "list"], columns, "table").splitlines()
        for name in [*longest, "aten::_native_batch_norm_legit_no_training.out"]:
            assert any(re.search(rf"(^|[\s{''.join(BOX)}]){re.escape(name)}($|\s)", line) for line in lines), \
                f"{name} is not whole on one line at {columns} columns"


def test_free_text_wraps_at_spaces(db):  # noqa: F811
    """The queue's ``because`` is longer than 80 columns: it goes on over lines, each break at a space."""
    plain = shown(db, ["queue"], 200, "tsv").splitlines()
    because = dict(zip(plain[0].split("\t"), plain[1].split("\t")))["because"].split()
    assert len(" ".join(because)) > 80
    table = shown(db, ["queue"], 80, "table").splitlines()
    first = next(i for i, line in enumerate(table) if " ".join(because[:3]) in line)
    last = next(i for i, line in enumerate(table) if " ".join(because[-3:]) in line)
    assert last > first, "the text is on one line"
    assert " ".join(" ".join(table[first:last + 1]).split()).find(" ".join(because)) >= 0 or all(
        any(word in line for line in table[first:last + 1]) for word in because)
