"""Issue 17 point 9: text someone typed (a rationale, a member name, a reason) is printed with its
control characters visible, never sent raw to the terminal; --json stays exact."""

from __future__ import annotations

from conftest import SAMPLE

from opgov.render.escapes import visible

V1, TAGS = SAMPLE / "native_functions.v1.yaml", SAMPLE / "tags.yaml"
CLEAR = "\x1b[2J\x1b[H"  # clear the screen, cursor home
TITLE = "\x1b]0;pwned\x07"  # OSC: set the window title
LINK = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"  # OSC 8 hyperlink
BIDI = "\u202egnp.exe"  # right-to-left override
C1 = "\x9b31m"  # the one-byte CSI


def _no_raw_controls(text: str) -> None:
    for ch in ("\x1b", "\x07", "\x9b", "\u202e", "\r"):
        assert ch not in text, repr(text)


def test_visible_escapes_controls_and_keeps_the_rest():
    assert visible(CLEAR + TITLE) == "\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07"
    assert visible(BIDI) == "\\u202egnp.exe"
    assert visible(C1) == "\\x9b31m"
    assert visible("over\rwrite") == "over\\x0dwrite"
    plain = "aten::add.Tensor(Tensor self) -> Tensor\tcafé → 核\nnext line"
    assert visible(plain) == plain
    assert visible("a\nb", one_line=True) == "a\\nb"


def test_log_members_and_proposals_show_print_escapes_visibly(cli):
    cli.ok("import", V1, "--tags-yaml", TAGS, "--label", "v1")
    evil_name = f"eve{CLEAR}{BIDI}"
    cli.ok("members", "add", "alice", "--role", "maintainer", actor="alice")
    refused = cli("members", "add", evil_name, "--role", "developer", actor="alice")  # a name must read as itself
    assert refused.code == 2 and "eve\\x1b[2J" in refused.err
    _no_raw_controls(refused.err)
    cli.ok("members", "add", "eve", "--role", "developer", actor="alice")
    rationale = f"looks fine {TITLE}{LINK} really {C1}"
    cli.ok("propose-core", "aten::glu", "--rationale", rationale, actor="eve")

    for args in (("log",), ("members", "list"), ("proposals", "show", "1")):
        _no_raw_controls(cli.ok(*args).out)
    shown = cli.ok("proposals", "show", "1").out
    assert "looks fine \\x1b]0;pwned\\x07\\x1b]8;;https://evil.example" in shown

    # JSON keeps the exact text (its encoder escapes the controls)
    view = cli.ok("proposals", "show", "1", "--json")
    _no_raw_controls(view.out)
    assert view.json()["rationale"] == rationale and view.json()["proposer"] == "eve"


def test_an_error_line_shows_controls_visibly(cli):
    result = cli("members", "remove", f"nobody{TITLE}", actor="alice")
    assert result.code != 0
    _no_raw_controls(result.err)
    assert result.err.count("\n") == 1
