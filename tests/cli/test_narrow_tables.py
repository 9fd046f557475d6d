"""On a narrow terminal (80 or 60 columns) a table never breaks a word: an operator's name (PyTorch
2.13.0's real ones, ``aten::_native_batch_norm_legit_no_training.out``) or any other identifier
is on one line, whole; free text (a rationale, a reason) wraps at spaces. What a pipe gets (tsv)
is the oracle for the words each table must show. On an 80- or 120-column terminal a list is a
table: one whose longest words cannot stand side by side leaves out the columns a reader can spare
and says which ("left out: …"); only when even that is too wide is it one record a block, as
``psql``'s expanded display is. ``--columns a,b,c`` chooses the columns of every list."""

from __future__ import annotations

import functools
import os
import re

import pytest

from tests.cli.test_pipes import BOX, INVOCATIONS, db, executorch_registries  # noqa: F401 - fixtures
from tests.conftest import opgov_in_process

# every command that prints a rich table (``runtimes coverage`` writes plain text, never wrapped)
COMMANDS = {**INVOCATIONS, "proposals list": ["proposals", "list"]}


def shown(url: str, argv: list[str], columns: int, fmt: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("OPGOV_FORCE_TTY", "COLUMNS")}
    if fmt == "table":
        env["OPGOV_FORCE_TTY"] = "1"  # a terminal's table, as a user sees it
    # in this process (what is printed is the point, not the process): stdout is not a terminal,
    # as a pipe is not, and the terminal's width is COLUMNS
    result = opgov_in_process(["--db", url, "--actor", "alice", *argv], env={**env, "COLUMNS": str(columns)})
    assert result.returncode == 0, result.stderr
    return result.stdout + (result.stderr if fmt == "tsv" else "")  # tsv: its notes too, said as they are


@functools.cache
def _tsv(url: str, argv: tuple[str, ...]) -> str:
    return shown(url, list(argv), 200, "tsv")


def tsv(url: str, argv: list[str]) -> str:
    """What a pipe gets of ``argv`` (the tests only read: each command's once per database)."""
    return _tsv(url, tuple(argv))


def left_out(table: str) -> set[str]:
    """The columns a table says it left out to fit the terminal."""
    found = re.search(r"left out to fit \d+ columns: (.*?) \(--columns chooses", " ".join(table.split()))
    return set(found.group(1).split(", ")) if found else set()


def words(tsv: str, without: set[str] = frozenset()) -> set[str]:
    """The words of every cell a pipe gets (the header line left out, and the columns ``without``),
    long enough to be identifiers or words no table cell should split."""
    lines = tsv.splitlines()
    header = lines[0].split("\t") if lines else []
    cells = [cell for line in lines[1:] if not line.startswith("# ")
             for name, cell in zip(header, line.split("\t")) if name not in without]
    return {w for cell in cells for w in cell.replace("\\t", " ").replace("\\n", " ").split() if len(w) >= 6}


@pytest.mark.parametrize("columns", [80, 60])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_narrow_table_keeps_every_word_whole(db, command, columns):  # noqa: F811
    argv = COMMANDS[command]
    table = shown(db, argv, columns, "table")
    plain = tsv(db, argv)
    lines = table.splitlines()
    assert lines, f"{command} printed nothing"
    for line in set(lines) - set(plain.splitlines()):  # a table's line (not a line said as it is)
        # wider than the terminal only to keep one word (a path, a name) whole
        assert len(line) <= columns or line.rstrip().rfind(" ") < columns, \
            f"{command}: {line!r} is wider than {columns} columns with more than one word past the edge"
    expected = words(plain, left_out(table))
    names = set(re.findall(r"aten::[A-Za-z0-9_.]*[A-Za-z0-9_]", table)) | {w for w in expected if w.startswith("aten::")}
    names -= {n for n in names if not any(n in w for w in expected)} if left_out(table) else set()
    assert expected | names, f"{command}: no word to check"
    for word in expected | names:
        assert any(word in line for line in lines), f"{command} at {columns} columns broke {word!r}:\n{table}"


def test_the_longest_real_names_stand_whole_in_ops_list(db):  # noqa: F811
    """The names that broke before: PyTorch 2.13.0's longest overloads, each whole on one line."""
    plain = tsv(db, ["ops", "list"])
    longest = sorted({line.split("\t")[0] for line in plain.splitlines()[1:]}, key=len)[-20:]
    assert "aten::_native_batch_norm_legit_no_training.out" in plain
    for columns in (80, 60):
        lines = shown(db, ["ops", "list"], columns, "table").splitlines()
        for name in [*longest, "aten::_native_batch_norm_legit_no_training.out"]:
            assert any(re.search(rf"(^|[\s{''.join(BOX)}]){re.escape(name)}($|\s)", line) for line in lines), \
                f"{name} is not whole on one line at {columns} columns"


def test_free_text_wraps_at_spaces(db):  # noqa: F811
    """The queue's ``because`` is longer than 80 columns: it goes on over lines, each break at a space
    (at 100 columns; at 80 a 48-character operator's name and ``suggestion`` leave it no room, and the
    table says it left it out)."""
    # the operator with a proposal open (the first snapshot's undecided operators wait too, some with
    # longer names than the 48 characters the widths below are about)
    queue = ["queue", "--reason", "proposal"]
    plain = tsv(db, queue).splitlines()
    because = dict(zip(plain[0].split("\t"), plain[1].split("\t")))["because"].split()
    assert len(" ".join(because)) > 80
    assert "because" in left_out(shown(db, queue, 80, "table"))
    table = shown(db, queue, 100, "table").splitlines()
    first = next(i for i, line in enumerate(table) if " ".join(because[:2]) in line)
    last = max(i for i, line in enumerate(table) if because[-1] in line)  # a wrap may part the last two words
    assert last > first, "the text is on one line"
    assert " ".join(" ".join(table[first:last + 1]).split()).find(" ".join(because)) >= 0 or all(
        any(word in line for line in table[first:last + 1]) for word in because)


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_on_an_80_or_120_column_terminal_a_list_is_a_table(db, command, columns):  # noqa: F811
    """`ops list --category core` at 120 columns printed one block per record (761 lines for 102
    operators; a table only at ~200). Now a table, which says what it left out to fit."""
    table = shown(db, COMMANDS[command], columns, "table")
    assert not re.search(r"^-\[ 1 \]-", table, flags=re.M), f"{command} at {columns} columns is records:\n{table}"
    assert "┏" in table or "nothing" in table or "no " in table.lower(), f"{command} printed no table:\n{table}"
    if left_out(table):
        plain = tsv(db, COMMANDS[command])
        assert left_out(table) < set(plain.splitlines()[0].split("\t"))  # it names real columns


def test_ops_list_core_at_120_columns_is_one_line_per_operator(db):  # noqa: F811
    plain = tsv(db, ["ops", "list", "--category", "core"]).splitlines()
    for columns in (120, 80):
        table = shown(db, ["ops", "list", "--category", "core"], columns, "table").splitlines()
        assert len(table) <= len(plain) + 8, f"{len(table)} lines for {len(plain) - 1} operators at {columns} columns"
        assert "left out to fit" in "\n".join(table[-2:]) and "schema" in left_out("\n".join(table))  # the schema is `ops show`'s; --columns brings it back


LIST_COMMANDS = sorted(set(COMMANDS) - {"ops show"})  # ops show: an operator in parts, not a list


@pytest.mark.parametrize("command", LIST_COMMANDS)
def test_every_list_command_takes_columns(db, command):  # noqa: F811
    """`--columns a,b,c` chooses a list's columns, in that order (tsv and table); an unknown column
    is one line naming the list's columns, exit 2."""
    plain = tsv(db, COMMANDS[command]).splitlines()
    header = plain[0].split("\t")
    chosen = [header[-1], header[0]]
    picked = tsv(db, [*COMMANDS[command], "--columns", ",".join(chosen)]).splitlines()
    assert picked[0].split("\t") == chosen
    rows = [row.split("\t") for row in plain[1:] if row.count("\t") == len(header) - 1]  # not the notes
    assert [line.split("\t") for line in picked[1:] if line.count("\t") == 1] == [[row[-1], row[0]] for row in rows]
    table = shown(db, [*COMMANDS[command], "--columns", header[0]], 80, "table")
    assert "left out" not in table
    bad = opgov_in_process(["--db", db, "--actor", "alice", *COMMANDS[command], "--columns", f"{header[0]},nope"])
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr == f"opgov: error: --columns: no column 'nope' in this list (its columns: {', '.join(header)})\n"
