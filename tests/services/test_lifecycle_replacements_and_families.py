"""The lifecycle on the real 2.13.0 registry (issue 10): a replacement is a present, active,
functional operator, and a torchgen family (functional, in-place, out=, autogen) moves together
from the first step, with one timer, so that the sync bot's deletion never splits it."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from conftest import bad, refused
from opgov.core import yamlsync

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def at(days: float) -> str:
    return (T0 + timedelta(days=days)).isoformat()


@pytest.fixture(scope="module")
def release_db(tmp_path_factory, pytorch_release) -> Path:
    from opgov.cli.main import run

    path = tmp_path_factory.mktemp("release") / "opgov.db"
    folder = pytorch_release("2.13.0")
    for argv in (["db", "upgrade", "--simulation"],
                 ["--now", at(0), "import", folder / "native_functions.yaml", "--tags-yaml", folder / "tags.yaml",
                  "--label", "2.13.0"]):
        try:
            run(["--db", f"sqlite:///{path}", *map(str, argv)])
        except SystemExit as exc:
            assert exc.code in (0, None)
    return path


@pytest.fixture
def cli(make_cli, release_db, tmp_path):
    shutil.copyfile(release_db, tmp_path / "opgov.db")
    return make_cli(f"sqlite:///{tmp_path / 'opgov.db'}", upgrade=False)


def lifecycle(cli, op: str) -> tuple[str, str | None]:
    shown = cli.ok("ops", "show", op, "--json").json()
    return shown["lifecycle"], shown.get("lifecycle_since")


def test_a_replacement_is_present_active_and_functional(cli):
    # an out= variant is not what models move to
    refused(cli, "deprecate", "aten::abs", "--reason", "x", "--replacement", "aten::polar.out", now=at(1),
            words=["replacement aten::polar.out is an out variant", "functional"])
    refused(cli, "deprecate", "aten::abs", "--reason", "x", "--replacement", "aten::relu_", now=at(1),
            words=["aten::relu_ is an inplace variant"])
    # an operator 2.13.0 does not hold: unknown (bad input)
    bad(cli, "deprecate", "aten::abs", "--reason", "x", "--replacement", "aten::linalg_polar.out", now=at(1),
        words=["unknown operator aten::linalg_polar.out"])
    # a deprecating one, and one of the family being deprecated
    cli.ok("deprecate", "aten::sgn", "--reason", "x", now=at(1))
    refused(cli, "deprecate", "aten::abs", "--reason", "x", "--replacement", "aten::sgn", now=at(1),
            words=["replacement aten::sgn is deprecating"])
    refused(cli, "deprecate", "aten::abs", "--reason", "x", "--replacement", "aten::abs_", now=at(1),
            words=["aten::abs_ is an inplace variant"])
    assert lifecycle(cli, "aten::abs")[0] == "active"
    done = cli.ok("deprecate", "aten::abs", "--reason", "x", "--replacement", "aten::polar", "--json",
                  now=at(1)).json()
    assert done["replacement"] == "aten::polar"


def test_a_family_moves_together(cli, pytorch_release, tmp_path):
    # glu has an out= variant; add.Tensor an in-place and an out= one; resize_ an autogen functional
    moved = cli.ok("deprecate", "aten::glu", "--reason", "rarely used", "--json", now=at(1)).json()
    assert moved["family"] == ["aten::glu.out"]
    assert lifecycle(cli, "aten::glu.out") == lifecycle(cli, "aten::glu")
    text = cli.ok("deprecate", "aten::add.Tensor", "--reason", "x", "--replacement", "aten::sub.Tensor",
                  now=at(1)).out
    assert "with its family: aten::add.out, aten::add_.Tensor" in text
    assert cli.ok("ops", "show", "aten::add_.Tensor", "--json").json()["replacement"] == "aten::sub.Tensor"
    autogen = cli.ok("deprecate", "aten::resize_", "--reason", "x", "--replacement", "aten::view", "--json",
                     now=at(1)).json()
    assert "aten::resize" in autogen["family"]  # autogen: resize (its functional form)

    # one timer: no member starts a fresh clock; a step on any member moves them all
    refused(cli, "mark-deprecated", "aten::glu.out", now=at(14), words=["1 day left"])
    cli.ok("undeprecate", "aten::add_.Tensor", "--reason", "users objected", now=at(2))
    assert {lifecycle(cli, op)[0] for op in ("aten::add.Tensor", "aten::add.out", "aten::add_.Tensor")} == {"active"}
    tick = cli.ok("tick", "--within", "20", "--json", now=at(5)).json()
    assert {i["operator"] for i in tick["within"]} >= {"aten::glu", "aten::glu.out"}
    assert len({i["due_at"] for i in tick["within"] if i["operator"].startswith("aten::glu")}) == 1
    cli.ok("mark-deprecated", "aten::glu.out", now=at(15))
    assert lifecycle(cli, "aten::glu")[0] == "deprecated"
    applied = cli.ok("tick", "--apply", "--json", now=at(15 + 180)).json()["applied"]
    assert {i["operator"] for i in applied} >= {"aten::glu"}
    assert lifecycle(cli, "aten::glu")[0] == lifecycle(cli, "aten::glu.out")[0] == "deleted"
    log = cli.ok("log", "aten::glu.out", "--json").json()
    assert [e["action"] for e in log if e["action"].startswith("lifecycle.")] == [
        "lifecycle.deprecating", "lifecycle.deprecated", "lifecycle.deleted"]

    # the sync bot deletes both entries: no family split, a file torchgen would accept
    release = pytorch_release("2.13.0")
    nf, tags = tmp_path / "native_functions.yaml", tmp_path / "tags.yaml"
    shutil.copyfile(release / "native_functions.yaml", nf)
    shutil.copyfile(release / "tags.yaml", tags)
    result = cli("sync-yaml", nf, "--tags-yaml", tags, "--write", "--json")
    assert result.code == 0, result.err
    # resize_'s autogen operators follow it: the tag on resize_ speaks for them
    assert result.json()["conflicts"] == []
    names = {e.name for e in yamlsync.scan(nf.read_text())}
    assert "glu" not in names and "glu.out" not in names and "glu_backward" in names
