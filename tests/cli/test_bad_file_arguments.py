"""Every file argument of every command, given an empty file, a binary file (a .pt2 archive), a
directory, a FIFO, a character device (/dev/zero), a loop of symbolic links or a file larger than
opgov reads (opgov.formats.files.MAX_FILE_BYTES): exit 2, one line on stderr naming the file, no
traceback, nothing written — and nothing read first (a FIFO is never waited on, /dev/zero never
read, a large file never loaded)."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import threading
import zipfile
from contextlib import closing
from pathlib import Path

import click
import pytest
import typer

import opgov.cli.main  # noqa: F401 - registers every command on the app
from opgov.cli.app import app
from conftest import SAMPLE, db_fingerprint, run_opgov
from opgov.formats.files import MAX_FILE_BYTES

V1, TAGS = SAMPLE / "native_functions.v1.yaml", SAMPLE / "tags.yaml"

# How each file argument is given, with valid values for the rest; {bad} is the bad file and
# {good} a valid copy of the sample registry. The test below checks that this covers every file
# argument in the command tree.
INVOCATIONS: dict[tuple[str, str], list[str]] = {
    ("import", "native_functions_yaml"): ["import", "{bad}", "--label", "bad"],
    ("import", "tags_yaml"): ["import", "{good}", "--label", "bad", "--tags-yaml", "{bad}"],
    ("check-bc", "old"): ["check-bc", "{bad}", "{good}"],
    ("check-bc", "new"): ["check-bc", "{good}", "{bad}"],
    ("sync-yaml", "native_functions_yaml"): ["sync-yaml", "{bad}", "--check"],
    ("sync-yaml", "tags_yaml"): ["sync-yaml", "{good}", "--tags-yaml", "{bad}", "--check"],
    ("check-model", "ops"): ["check-model", "{bad}"],
    ("check-model", "models"): ["check-model", "{bad}"],  # the MODEL... argument (runtimes branch)
    ("check-decomps", "models"): ["check-decomps", "--models", "{bad}"],
    ("runtimes add", "ops"): ["runtimes", "add", "et@1.0", "--ops", "{bad}"],
    ("runtimes add", "served"): ["runtimes", "add", "et@1.0", "--ops", "{good}", "--served", "{bad}"],
    ("runtimes add", "torch_pin"): ["runtimes", "add", "et@1.0", "--ops", "{good}", "--torch-pin", "{bad}"],
    ("runtimes coverage", "models"): ["runtimes", "coverage", "--models", "{bad}"],
    ("queue", "models"): ["queue", "--models", "{bad}"],
    ("triage", "models"): ["triage", "--suggested", "--models", "{bad}"],
    ("decisions load", "file"): ["decisions", "load", "{bad}"],
    ("decomps load", "file"): ["decomps", "load", "{bad}"],
    ("opset build", "models"): ["opset", "build", "--models", "{bad}"],
    ("site build", "models"): ["site", "build", "{out}", "--models", "{bad}"],
    # the PR gate (where it is part of the command tree)
    ("check-pr", "base"): ["check-pr", "--base", "{bad}", "--head", "{good}"],
    ("check-pr", "head"): ["check-pr", "--base", "{good}", "--head", "{bad}"],
    ("check-pr", "config"): ["check-pr", "--base", "{good}", "--head", "{good}", "--config", "{bad}"],
    ("allowlist convert", "file"): ["allowlist", "convert", "{bad}"],
    ("triage", "file"): ["triage", "custom", "--rationale", "r", "--file", "{bad}"],
    ("allowlist convert", "config"): ["allowlist", "convert", "{allowlist}", "--config", "{bad}"],
}
# An empty policy file is a policy of defaults: only binary files and directories are bad there.
EMPTY_IS_FINE = {("check-pr", "config"), ("allowlist convert", "config")}
# Where a file is written, not read: only a directory is bad there.
OUTPUTS = {
    ("report weekly", "out"): ["report", "weekly", "--out", "{bad}"],
    ("decisions export", "file"): ["decisions", "export", "{bad}"],
    ("runtimes coverage", "out"): ["runtimes", "coverage", "--out", "{bad}"],
    ("check-pr", "sarif"): ["check-pr", "--base", "{good}", "--head", "{good}", "--sarif", "{bad}"],
    ("check-pr", "junit"): ["check-pr", "--base", "{good}", "--head", "{good}", "--junit", "{bad}"],
    ("check-pr", "requests"): ["check-pr", "--base", "{good}", "--head", "{good}", "--requests", "{bad}"],
}
FILE_METAVARS = {"FILE", "PATH", "OPS", "CORPUS", "REF|FILE"}
FILE_HELP = ("yaml path", "a file", "a corpus", "tags.yaml")


def file_arguments() -> set[tuple[str, str]]:
    """(command, parameter) for every parameter of the command tree that names a file: by its
    name (``*_yaml``, ``file``), its metavar, or its help ("yaml path", "a file", …)."""
    found = set()

    def walk(group: click.Group, prefix: tuple[str, ...]) -> None:
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                walk(command, (*prefix, name))
                continue
            for param in command.params:
                metavar = (param.metavar or "").strip("[]")
                help_text = (getattr(param, "help", "") or "").lower()
                if (param.name.endswith("_yaml") or param.name == "file" or metavar in FILE_METAVARS
                        or metavar.endswith("_YAML") or any(words in help_text for words in FILE_HELP)):
                    found.add((" ".join((*prefix, name)), param.name))

    walk(typer.main.get_command(app), ())
    return found


def all_parameters() -> set[tuple[str, str]]:
    found = set()

    def walk(group: click.Group, prefix: tuple[str, ...]) -> None:
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                walk(command, (*prefix, name))
            else:
                found.update((" ".join((*prefix, name)), p.name) for p in command.params)

    walk(typer.main.get_command(app), ())
    return found


PRESENT = all_parameters()
READS = sorted(k for k in INVOCATIONS if k in PRESENT)
WRITES = sorted(k for k in OUTPUTS if k in PRESENT)
CONFIGS = sorted(EMPTY_IS_FINE & set(READS))  # the TOML policy files
UNREADABLE = ("fifo", "device", "loop", "oversized")
CASES = ([(target, kind) for target in READS for kind in ("empty", "binary", "directory", "nested", *UNREADABLE)
          if not (kind == "empty" and target in EMPTY_IS_FINE) and not (kind == "nested" and target in CONFIGS)]
         + [(target, kind) for target in CONFIGS for kind in ("nested-toml", "nested-inline-toml", "oversized-toml")])


def test_every_file_argument_is_covered():
    assert file_arguments() == set(READS) | set(WRITES)


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory) -> dict[str, Path]:
    """The bad files, made once for the module (no test writes them: that they stay unread and
    unchanged is what the tests check)."""
    tmp_path = tmp_path_factory.mktemp("bad-files")
    empty = tmp_path / "empty.yaml"
    empty.write_bytes(b"")
    binary = tmp_path / "model.pt2"  # what torch.export.save writes: a zip archive
    with zipfile.ZipFile(binary, "w") as archive:
        archive.writestr("model/data.pkl", bytes(range(256)) * 8)
        archive.writestr("model/version", "7\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    deep = 100_000  # far past any parser's recursion limit
    nested = tmp_path / "nested.yaml"  # flow sequences: YAML and JSON alike
    nested.write_text("[" * deep + "]" * deep + "\n", encoding="utf-8")
    nested_toml = tmp_path / "nested.toml"
    nested_toml.write_text("a = " + "[" * deep + "]" * deep + "\n", encoding="utf-8")
    inline_toml = tmp_path / "inline.toml"
    inline_toml.write_text("a = " + "{b = " * 5_000 + "1" + "}" * 5_000 + "\n", encoding="utf-8")
    oversized = tmp_path / "oversized.toml"
    oversized.write_text("# a comment line of a policy file\n" * 40_000, encoding="utf-8")
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.yaml"  # loop.yaml → loop2.yaml → loop.yaml
    loop.symlink_to(tmp_path / "loop2.yaml")
    (tmp_path / "loop2.yaml").symlink_to(loop)
    huge = tmp_path / "huge.yaml"  # sparse: no disk, but its size says what reading it would cost
    with huge.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    return {"empty": empty, "binary": binary, "directory": folder, "nested": nested, "nested-toml": nested_toml,
            "nested-inline-toml": inline_toml, "oversized-toml": oversized, "fifo": fifo,
            "device": Path("/dev/zero"), "loop": loop, "oversized": huge}


class FifoWatch:
    """Whether a command blocked reading a FIFO: after ``after`` seconds, a writer opens it (which
    frees a blocked reader, with nothing to read) and says it found one. Bounds the test in time."""

    def __init__(self, fifo: Path, after: float = 20.0) -> None:
        self.fifo, self.found = fifo, False
        self.timer = threading.Timer(after, self._free)

    def _free(self) -> None:
        try:
            fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as err:  # ENXIO: nobody is reading it
            assert err.errno == errno.ENXIO
            return
        self.found = True
        os.close(fd)

    def __enter__(self):
        self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self.timer.cancel()
        self.timer.join()


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    """A simulation database holding the sample registry, made once for the module."""
    path = tmp_path_factory.mktemp("imported") / "opgov.db"
    url = f"sqlite:///{path}"
    run_opgov("--db", url, "db", "upgrade", "--simulation")
    run_opgov("--db", url, "--actor", "alice@example.com", "import", V1, "--tags-yaml", TAGS, "--label", "v1")
    return path


@pytest.fixture
def populated(make_cli, imported, tmp_path):
    """A database with a snapshot (so commands get as far as reading their file): this test's copy."""
    with closing(sqlite3.connect(imported)) as source, closing(sqlite3.connect(tmp_path / "opgov.db")) as copy:
        source.backup(copy)
    cli = make_cli(f"sqlite:///{tmp_path / 'opgov.db'}", upgrade=False)
    good = tmp_path / "good" / "native_functions.yaml"
    good.parent.mkdir()
    shutil.copyfile(V1, good)
    shutil.copyfile(TAGS, good.parent / "tags.yaml")
    return cli, good


@pytest.mark.parametrize(("target", "kind"), CASES, ids=[f"{t[0]}:{t[1]}-{k}" for t, k in CASES])
def test_bad_file_is_one_line_and_exit_2(populated, bad_files, kind, target):
    cli, good = populated
    with FifoWatch(bad_files["fifo"]) as watch:
        _expect_bad_input(cli, INVOCATIONS[target], bad_files[kind], good)
    assert not watch.found, "the command waited on a FIFO"


@pytest.mark.parametrize("target", WRITES, ids=lambda t: f"{t[0]}:{t[1]}")
def test_output_into_a_directory_is_one_line_and_exit_2(populated, bad_files, target):
    cli, good = populated
    _expect_bad_input(cli, OUTPUTS[target], bad_files["directory"], good)


def _expect_bad_input(cli, template: list[str], bad: Path, good: Path) -> None:
    allowlist = good.parent / "check_forward_backward_compatibility.py"
    allowlist.write_text("ALLOW_LIST = []\n", encoding="utf-8")
    out = good.parent / "site"  # a folder a command may create (site build)
    args = [a.format(bad=bad, good=good, allowlist=allowlist, out=out) for a in template]
    before = db_fingerprint(cli.url)
    good_bytes = good.read_bytes()
    result = cli(*args)
    shown = f"opgov {' '.join(args)}"
    assert result.code == 2, f"{shown} exited {result.code}: {result.err}{result.out}"
    assert "Traceback" not in result.err and "Traceback" not in result.out, shown
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, f"{shown}: {result.err}"
    assert lines[0].startswith("opgov: error: ") and bad.name in lines[0], f"{shown}: {lines[0]}"
    assert db_fingerprint(cli.url) == before, f"{shown} changed the database"
    assert good.read_bytes() == good_bytes


@pytest.mark.parametrize("kind", ["fifo", "device", "loop"])
@pytest.mark.parametrize("spelling", ["path", "url"])
def test_a_database_that_is_no_file_is_one_line_and_exit_2(make_cli, bad_files, kind, spelling):
    bad = bad_files[kind]
    cli = make_cli(str(bad) if spelling == "path" else f"sqlite:///{bad}", upgrade=False)
    with FifoWatch(bad_files["fifo"]) as watch:
        for args in (("db", "upgrade"), ("ops", "list")):
            result = cli(*args)
            assert result.code == 2, result.err
            assert "Traceback" not in result.err and result.err.count("\n") == 1, result.err
            assert result.err.startswith(f"opgov: error: database {bad}") and " is " in result.err, result.err
    assert not watch.found, "opgov waited on a FIFO"
    assert bad == Path("/dev/zero") or not bad.is_file()
