"""What the Typer commands share: global options, the actor, the clock, one transaction per
command, and rendering.

Policy lives in the services and the core, with one exception that belongs to opening a
command: :func:`command` honours a claimed time (``--now`` / ``OPGOV_NOW``) only on a simulation
database, and refuses a write command that claims one anywhere else, so nobody can skip a timer.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from opgov.core.clock import Clock, FixedClock, SystemClock, parse_time
from opgov.core.errors import BadInput, PolicyRefusal


@dataclass
class Globals:
    db: str | None = None
    actor: str | None = None
    now: str | None = None
    server: str | None = None


GLOBALS = Globals()


def server() -> str | None:
    """The server this command line asks (``--server``, else ``OPGOV_SERVER``), or None: the
    database. Every command asks this, and opgov.usecases.client.connect decides by it."""
    return GLOBALS.server or os.environ.get("OPGOV_SERVER") or None


class NotRemote(BadInput):
    """A command that works on a database only, run with ``--server``. The shell, which knows every
    command (opgov.cli.main), says which do work with it (:meth:`naming`)."""

    def __init__(self) -> None:
        super().__init__("this command does not work with --server yet; run it with --db")

    def naming(self, remote: list[str]) -> str:
        """The refusal naming the commands that work with ``--server`` (opgov.cli.client.callers)."""
        return (f"this command does not work with --server yet (only {', '.join(remote[:-1])} and {remote[-1]} "
                "do); run it with --db")


def resolve_actor(explicit: str | None) -> str:
    """--actor, else OPGOV_ACTOR, else git's user.email, else the OS user."""
    if explicit:
        return explicit
    if os.environ.get("OPGOV_ACTOR"):
        return os.environ["OPGOV_ACTOR"]
    try:
        email = subprocess.run(["git", "config", "user.email"], capture_output=True, text=True,
                               timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        email = ""
    return email or getpass.getuser()


def claimed_time() -> str | None:
    return GLOBALS.now or os.environ.get("OPGOV_NOW") or None


@contextmanager
def command(*, write: bool, orm: bool = True) -> Iterator[Any]:
    """One command = one transaction on a database at the head revision.

    A claimed time (``--now``/``OPGOV_NOW``) is honoured only on a simulation database; a write
    command on any other database is refused, so nobody can skip a timer.
    """
    if server():
        raise NotRemote()
    from opgov.db.engine import ensure_current, make_engine, resolve_url, transaction
    from opgov.reads.common import Ctx, is_simulation

    engine = make_engine(resolve_url(GLOBALS.db))
    try:
        ensure_current(engine)
        with transaction(engine, orm=orm, write=write) as session:
            claimed = claimed_time()
            clock: Clock = SystemClock()
            if claimed is not None:
                if is_simulation(session):
                    clock = FixedClock(parse_time(claimed, what="--now"))
                elif write:
                    raise PolicyRefusal("a claimed time (--now / OPGOV_NOW) is honoured only on a database "
                                        "created with `opgov db upgrade --simulation`")
                else:
                    clock = FixedClock(parse_time(claimed, what="--now"))
            actor = resolve_actor(GLOBALS.actor)
            if len(actor) > 200:  # what every actor column holds
                from opgov.core.errors import BadInput

                raise BadInput(f"--actor is {len(actor)} characters long; at most 200 fit")
            yield Ctx(session=session, actor=actor, clock=clock)
    finally:
        engine.dispose()


def print_json(data: Any) -> None:
    """A service's typed result (or a list of them) as JSON: the documented shape."""
    import dataclasses

    if dataclasses.is_dataclass(data) or isinstance(data, list) and data and dataclasses.is_dataclass(data[0]):
        from opgov.results.plain import to_json  # a result declared as a dataclass: no pydantic

        text = to_json(data)
    elif hasattr(data, "model_dump_json"):
        text = data.model_dump_json(indent=2, by_alias=True)
    elif isinstance(data, list):
        from pydantic_core import to_json

        text = to_json(data, indent=2, by_alias=True).decode()
    else:
        text = json.dumps(data, indent=2, default=str)
    # pydantic escapes C0 controls only: C1 controls and bidi overrides too, as \uXXXX (same JSON value)
    sys.stdout.write(_UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")


_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def day(value: Any) -> str:
    """``YYYY-MM-DD`` of a date or time (text output)."""
    return "" if value is None else value.strftime("%Y-%m-%d")


def minute(value: Any) -> str:
    """``YYYY-MM-DD HH:MM`` of a UTC time (text output)."""
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M")


def second(value: Any) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` of a UTC time (text output, as the log shows it)."""
    return "" if value is None else value.strftime("%Y-%m-%dT%H:%M:%S")


def console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def terminal() -> bool:
    """Is stdout a terminal (or ``OPGOV_FORCE_TTY=1``, as ``GH_FORCE_TTY``)?"""
    return sys.stdout.isatty() or bool(os.environ.get("OPGOV_FORCE_TTY"))


@dataclass(frozen=True)
class Output:
    """How a list command prints, from its ``--format`` (and ``--json``): ``table`` (rich),
    ``tsv`` (plain columns) or ``json``. With ``tsv`` stdout holds the columns only: a note about
    them goes to stderr, and an empty list is its header line."""

    format: str
    columns: tuple[str, ...] = ()  # --columns: the list's columns to show, in this order (empty: all that fit)

    @property
    def json(self) -> bool:
        return self.format == "json"

    def table(self, title: str | None, columns: list[str], rows: list[list[Any]], *, section: bool = False,
              spare: Sequence[str] = ()) -> None:
        """``spare``: the columns a reader can do without, the first to leave out when the table
        does not fit the terminal (default: from the right, never the first)."""
        chosen = bool(self.columns) and not section
        if chosen:
            columns, rows = self.chosen(columns, rows)
        table(title, columns, rows, section=section, plain=self.format == "tsv", fit=not chosen, spare=spare)

    def chosen(self, columns: list[str], rows: list[list[Any]]) -> tuple[list[str], list[list[Any]]]:
        """The columns ``--columns`` names, in its order (an unknown one: one line, exit 2)."""
        unknown = [name for name in self.columns if name not in columns]
        if unknown:
            from opgov.core.errors import BadInput

            raise BadInput(f"--columns: no column {unknown[0]!r} in this list (its columns: {', '.join(columns)})")
        at = [columns.index(name) for name in dict.fromkeys(self.columns)]
        return [columns[i] for i in at], [[row[i] for i in at] for row in rows]

    def section(self, title: str, columns: list[str], rows: list[list[Any]]) -> None:
        self.table(title, columns, rows, section=True)

    def note(self, text: str) -> None:
        """A line about the table: under it on a terminal, on stderr beside plain columns."""
        if self.format == "tsv":
            from opgov.render.escapes import visible

            sys.stderr.write(visible(text) + "\n")
        else:
            say(text)

    def empty(self, text: str, columns: list[str]) -> None:
        """Nothing to list: ``text`` on a terminal; the header line (and ``text`` on stderr) as tsv."""
        if self.columns:
            columns, _ = self.chosen(columns, [])
        if self.format == "tsv":
            table(None, columns, [], plain=True)
        self.note(text)


def output(fmt: Any = "auto", json_out: bool = False, columns: str | None = None) -> Output:
    """Resolve ``--format`` (``auto``: table on a terminal, tsv elsewhere), ``--json`` (an alias
    of ``--format json``; with another --format, refused) and ``--columns a,b,c`` (a table's or
    tsv's columns; with json, refused: it prints the whole result)."""
    from opgov.core.errors import BadInput

    names = tuple(name.strip() for name in (columns or "").split(",") if name.strip())
    if columns is not None and not names:
        raise BadInput("--columns names no column: give them comma-separated, e.g. --columns name,category")
    chosen = getattr(fmt, "value", fmt) or "auto"
    if names and (json_out or chosen == "json"):
        raise BadInput("--columns chooses the columns of a table or tsv; --format json prints the whole result")
    if json_out:
        if chosen not in ("auto", "json"):
            from opgov.core.errors import BadInput

            raise BadInput(f"--json and --format {chosen} disagree: --json is --format json; give one of them")
        chosen = "json"
    if chosen == "auto":
        chosen = "table" if terminal() else "tsv"
    return Output(chosen, names)


def table(title: str | None, columns: list[str], rows: list[list[Any]], *, section: bool = False,
          plain: bool | None = None, fit: bool = True, spare: Sequence[str] = ()) -> None:
    """Rows under a header. On a terminal, a rich table; into a pipe or a file, plain columns as
    kubectl and gh print them (``OPGOV_FORCE_TTY=1`` keeps the terminal's tables, as
    ``GH_FORCE_TTY`` does): a header line, then one record a line, tab-separated, nothing
    truncated or wrapped, no box characters (a tab or newline inside a cell is written ``\\t`` or
    ``\\n``). ``plain`` decides instead of the terminal (``--format tsv`` or ``table``).
    ``section``: the title names a part of a longer output (``ops show``) and is kept in plain
    columns too, as ``# title``; a list's title is left out there, so the first line is the header.
    A table wider than the terminal leaves out (``fit``) the columns a reader can spare (``spare``,
    else from the right, never the first) until its words stand side by side, and says which under
    it; only when even then they cannot is it one record a block."""
    from opgov.render.escapes import visible

    if plain is None:
        plain = not terminal()
    if plain:
        def cell(value: Any) -> str:
            return visible("" if value is None else str(value), one_line=True).replace("\t", "\\t")

        lines = ([f"# {title}"] if section and title else []) + ["\t".join(columns)]
        lines += ["\t".join(cell(v) for v in row) for row in rows]
        sys.stdout.write("\n".join(lines) + "\n")
        return
    from rich.markup import escape
    from rich.table import Table

    cells = [["" if v is None else visible(str(v)) for v in row] for row in rows]
    shown = console()
    widths = _widths(columns, cells, shown.width - 3 * len(columns) - 1)  # less the box and padding
    left_out: list[str] = []
    if widths is None and fit and len(columns) > 1:
        keep = list(columns)
        for name in [*[c for c in spare if c in columns[1:]], *[c for c in reversed(columns[1:]) if c not in spare]]:
            keep.remove(name)
            left_out.append(name)
            at = [columns.index(c) for c in keep]
            widths = _widths(keep, [[row[i] for i in at] for row in cells], shown.width - 3 * len(keep) - 1)
            if widths is not None:
                columns, cells = keep, [[row[i] for i in at] for row in cells]
                break
    if widths is None:
        _records(shown, title, columns, cells)
        return
    out = Table(title=title, show_lines=False, title_justify="left")
    for column, width in zip(columns, widths):
        out.add_column(column, overflow="fold", width=width)
    for row in cells:  # cells are data, never markup (`Tensor(a)[]` prints as it is) nor control codes
        out.add_row(*[escape(v) for v in row])
    shown.print(out)
    if left_out:
        import textwrap

        say(textwrap.fill(f"{LEFT_OUT} {shown.width} columns: {', '.join(left_out)} (--columns chooses; "
                          "--format tsv has all)", shown.width, break_long_words=False, break_on_hyphens=False))


LEFT_OUT = "left out to fit"  # the line under a table that left out columns to fit the terminal


def _widths(columns: list[str], cells: list[list[str]], room: int) -> list[int] | None:
    """Each column's width in ``room`` characters so that no word is broken (an operator's name
    stays whole; free text wraps at spaces): at least its longest word, at most its longest line,
    the space left shared so the narrow columns are whole first. None: even the longest words do
    not fit side by side (rich alone would fold them mid-word)."""
    from rich.cells import cell_len

    def lines(text: str) -> list[str]:
        return text.split("\n")

    low = [max((cell_len(w) for w in c.split()), default=0) for c in columns]
    high = [max(cell_len(line) for line in lines(c)) for c in columns]
    for row in cells:
        for i, value in enumerate(row):
            low[i] = max(low[i], max((cell_len(w) for w in value.split()), default=0))
            high[i] = max(high[i], max(cell_len(line) for line in lines(value)))
    if sum(low) > room:
        return None
    widths, spare = list(low), room - sum(low)
    waiting = [i for i in range(len(columns)) if high[i] > low[i]]
    while waiting and spare > 0:
        share = spare // len(waiting)
        whole = [i for i in waiting if high[i] - widths[i] <= share]
        if not whole:
            for n, i in enumerate(waiting):
                widths[i] += share + (1 if n < spare % len(waiting) else 0)
            break
        for i in whole:
            spare -= high[i] - widths[i]
            widths[i] = high[i]
            waiting.remove(i)
    return widths


def _records(shown: Any, title: str | None, columns: list[str], cells: list[list[str]]) -> None:
    """A table too wide for the terminal, as ``psql``'s expanded display prints it: one block per
    row, a ``Column  value`` line per cell. Free text wraps at spaces under its value; a word (an
    operator's name) is never broken, and one longer than the line is printed whole."""
    import textwrap

    label = max(len(c) for c in columns) + 2
    width = max(shown.width - label, 20)
    lines = textwrap.wrap(title, shown.width, break_long_words=False, break_on_hyphens=False) if title else []
    for n, row in enumerate(cells, 1):
        lines.append(f"-[ {n} ]" + "-" * max(shown.width - len(f"-[ {n} ]") - 1, 0))
        for column, value in zip(columns, row):
            parts = [p for para in value.split("\n")
                     for p in (textwrap.wrap(para, width, break_long_words=False, break_on_hyphens=False) or [""])]
            lines.append(f"{column:<{label}}{parts[0]}".rstrip())
            lines += [" " * label + p for p in parts[1:]]
    sys.stdout.write("\n".join(lines) + "\n")


def section(title: str, columns: list[str], rows: list[list[Any]]) -> None:
    """A titled part of a longer output (:func:`table` with ``section``)."""
    table(title, columns, rows, section=True)


def say(text: str, *, bold: str | None = None, plain: bool = False) -> None:
    """One line of output. Text is data, never markup (a schema's ``Tensor(a)[]`` prints as
    it is). ``bold`` is a leading part to emphasise, on a terminal only (and not ``plain``: ``--format
    tsv``); off a terminal nothing loads rich, which keeps piped and scripted use fast."""
    from opgov.render.escapes import visible

    text = visible(text)  # an ESC or OSC sequence typed into a rationale is shown, never obeyed
    if bold is not None and sys.stdout.isatty() and not plain:
        from rich.text import Text

        console().print(Text(bold, style="bold") + Text(text))
    else:
        sys.stdout.write((bold or "") + text + "\n")
