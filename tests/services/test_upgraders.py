"""Upgraders (PyTorch's operator versioning guide): recording them with their version bumps, the
180-day rule for replacing one, what tick reports, and check-bc on real releases: a BC break an
upgrader covers, and the upgrader to add for one it does not."""

from __future__ import annotations

import shutil
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from conftest import SAMPLE, bad, refused
from opgov.core.errors import BadInput
from opgov.core.upgraders import Upgrader, check_replace, default_name, parse_range, suggest, version_map_entry

LINSPACE_OLD = ("aten::linspace(Scalar start, Scalar end, int? steps=None, *, ScalarType? dtype=None, "
                "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor")
CAN_CAST_OLD = "can_cast(ScalarType from, ScalarType to) -> bool"  # 2.0.0; 2.6.0 renamed `from` to `from_`
T0 = "2026-01-15T09:00Z"


def _run(*argv) -> None:
    from opgov.cli.main import run

    try:
        run([str(a) for a in argv])
    except SystemExit as exc:
        assert exc.code in (0, None), f"opgov {' '.join(map(str, argv))} exited {exc.code}"


# --- pure rules ------------------------------------------------------------------------------------


def test_names_ranges_and_version_map_entries():
    assert default_name("aten::div.Tensor", 0, 3) == "div_Tensor_0_3"
    assert default_name("aten::linspace", 0, 7) == "linspace_0_7"
    assert default_name("aten::linspace.out", 0, 7) == "linspace_out_0_7"
    assert parse_range("0-3") == parse_range("[0, 3]") == parse_range("0..3") == (0, 3)
    for text in ("3-0", "a-b", "3", "-1-2"):
        with pytest.raises(BadInput, match="version range"):
            parse_range(text)
    assert version_map_entry("aten::div.Tensor", 4, "div_Tensor_0_3", "div.Tensor(Tensor self, Tensor other) -> Tensor") \
        == '{"aten::div.Tensor", {{4, "div_Tensor_0_3", "aten::div.Tensor(Tensor self, Tensor other) -> Tensor"}}}'


def test_replacing_waits_180_days_after_the_bump():
    u = Upgrader("linspace_0_7", "aten::linspace", 0, 7, LINSPACE_OLD, bumped_on=date(2022, 1, 24))
    why = check_replace(u, datetime(2022, 7, 22, 12, tzinfo=timezone.utc))
    assert why is not None and "can be replaced from 2022-07-23 (1 day left)" in why
    assert check_replace(u, datetime(2022, 7, 23, tzinfo=timezone.utc)) is None
    assert "replaced already" in check_replace(Upgrader("x_0_1", "aten::x", 0, 1, "x() -> ()", replaced_by="x_0_2"),
                                               datetime(2030, 1, 1, tzinfo=timezone.utc))


def test_suggestions_continue_the_operators_versions():
    recorded = [Upgrader("div_Tensor_0_3", "aten::div.Tensor", 0, 3, "div.Tensor(Tensor self, Tensor other) -> Tensor")]
    name, bump, entry = suggest("aten::div.Tensor", "div.Tensor(Tensor self, Tensor other, *, str? mode) -> Tensor",
                                recorded, current_version=9)
    assert (name, bump) == ("div_Tensor_4_9", 10)
    assert entry.startswith('{"aten::div.Tensor", {{10, "div_Tensor_4_9", "aten::div.Tensor(Tensor self')
    assert suggest("aten::can_cast", CAN_CAST_OLD, recorded, current_version=0)[:2] == ("can_cast_0_0", 1)


# --- through the CLI, on PyTorch 2.6.0 --------------------------------------------------------------------


@pytest.fixture(scope="module")
def db_2_6(tmp_path_factory, pytorch_release) -> Path:
    path = tmp_path_factory.mktemp("upgraders") / "opgov.db"
    url = f"sqlite:///{path}"
    folder = pytorch_release("2.6.0")
    _run("--db", url, "db", "upgrade", "--simulation")
    _run("--db", url, "--now", T0, "import", folder / "native_functions.yaml", "--tags-yaml", folder / "tags.yaml",
         "--label", "2.6.0")
    return path


@pytest.fixture
def up(make_cli, db_2_6, tmp_path):
    path = tmp_path / "copy.db"
    shutil.copyfile(db_2_6, path)
    return make_cli(f"sqlite:///{path}", upgrade=False)


def _add_linspace(cli, **kw):
    return cli("upgraders", "add", "aten::linspace", "--versions", "0-7", "--old-schema", LINSPACE_OLD,
               "--bumped-on", "2022-01-24", "--reason", "linspace errors out when steps is not given", "--json",
               now=T0, **kw)


def test_record_list_show(up):
    added = _add_linspace(up)
    assert added.code == 0, added.err
    view = added.json()["upgrader"]
    assert view["name"] == "linspace_0_7" and view["follows_naming"]
    assert view["bump"] == {"version": 8, "bumped_on": "2022-01-24", "reason": "linspace errors out when steps is not given"}
    assert view["version_map_entry"] == f'{{"aten::linspace", {{{{8, "linspace_0_7", "{LINSPACE_OLD}"}}}}}}'
    assert view["replaceable_from"].startswith("2022-07-23")
    assert _add_linspace(up).json()["outcome"] == "unchanged"
    # a second upgrader at the same bump needs no date again; giving another date is bad input
    out = up.ok("upgraders", "add", "aten::linspace.out", "--versions", "0-7", "--old-schema",
                "linspace.out(Scalar start, Scalar end, int? steps=None, *, Tensor(a!) out) -> Tensor(a!)",
                "--name", "linspace_out_v07", now=T0)
    assert "note: the name does not follow <name>_<overload>_<start>_<end>" in out.out
    bad(up, "upgraders", "add", "aten::logspace", "--versions", "0-7", "--old-schema",
        "logspace(Scalar start, Scalar end, int? steps=None, float base=10.0, *, ScalarType? dtype=None, "
        "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor", "--bumped-on", "2022-02-01",
        now=T0, words=["version bump 8 is recorded already, on 2022-01-24"])
    listed = up.ok("upgraders", "list", "--json").json()
    assert listed["current_version"] == 8
    assert [u["name"] for u in listed["upgraders"]] == ["linspace_0_7", "linspace_out_v07"]
    text = up.ok("upgraders", "show", "linspace_0_7").out
    assert text.startswith("linspace_0_7: aten::linspace versions 0-7, version bump 8 on 2022-01-24")
    assert "may be replaced from 2022-07-23" in text
    bad(up, "upgraders", "show", "linspace_0_8", words=["unknown upgrader linspace_0_8; did you mean linspace_0_7"])
    assert [e["action"] for e in up.ok("log", "--json").json()][-3:] == ["version-bump", "upgrader-added",
                                                                         "upgrader-added"]


def test_bad_input_and_refusals(up):
    def add(*args, **kw):
        return ["upgraders", "add", *args]

    bad(up, *add("aten::linspacee", "--versions", "0-7", "--old-schema", LINSPACE_OLD, "--bumped-on", "2022-01-24",
                 "--reason", "r"), now=T0, words=["unknown operator aten::linspacee; did you mean aten::linspace"])
    bad(up, *add("aten::linspace", "--versions", "7-0", "--old-schema", LINSPACE_OLD), now=T0, words=["version range"])
    bad(up, *add("aten::linspace", "--versions", "0-7", "--old-schema", "linspace(Scalar start"), now=T0,
        words=["--old-schema"])
    bad(up, *add("aten::linspace", "--versions", "0-7", "--old-schema", CAN_CAST_OLD, "--bumped-on", "2022-01-24",
                 "--reason", "r"), now=T0, words=["--old-schema declares aten::can_cast, not aten::linspace"])
    bad(up, *add("aten::linspace", "--versions", "0-7", "--old-schema", LINSPACE_OLD), now=T0,
        words=["version bump 8 is not recorded: give --bumped-on DATE and --reason"])
    assert _add_linspace(up).code == 0
    # versions go up with time
    bad(up, *add("aten::can_cast", "--versions", "0-9", "--old-schema", CAN_CAST_OLD, "--bumped-on", "2021-01-01",
                 "--reason", "r"), now=T0, words=["would come before bump 8 on 2022-01-24"])
    # a range that meets an in-force upgrader's
    refused(up, *add("aten::linspace", "--versions", "5-9", "--old-schema", LINSPACE_OLD, "--bumped-on", "2022-03-01",
                     "--reason", "r"), now=T0, words=["meet those of upgrader linspace_0_7 (0-7)", "--replaces"])
    # roles
    up.ok("members", "add", "alice@example.com", "--role", "maintainer", now=T0)
    up.ok("members", "add", "bot@example.com", "--role", "bot", now=T0)
    refused(up, *add("aten::can_cast", "--versions", "0-9", "--old-schema", CAN_CAST_OLD, "--bumped-on", "2025-12-01",
                     "--reason", "r"), actor="bot@example.com", now=T0, words=["may not record upgraders"])


def test_replacing_an_upgrader_waits_180_days_and_tick_reports_it(up):
    args = ["upgraders", "add", "aten::can_cast", "--versions", "0-9", "--old-schema", CAN_CAST_OLD,
            "--bumped-on", "2025-12-01", "--reason", "can_cast renames from to from_"]
    up.ok(*args, now=T0)
    assert up.ok("tick", now=T0).out == "nothing is due\n"
    coming = up.ok("tick", "--within", "200", "--json", now=T0).json()["upgraders"]
    assert coming["due"] == [] and [(t["name"], t["days_left"]) for t in coming["within"]] == [("can_cast_0_9", 135)]
    assert "coming: upgrader can_cast_0_9 (aten::can_cast) may be replaced from 2026-05-30 (135 days)" in \
        up.ok("tick", "--within", "200", now=T0).out
    replace = ["upgraders", "add", "aten::can_cast", "--versions", "0-10", "--old-schema", CAN_CAST_OLD,
               "--bumped-on", "2026-05-01", "--reason", "can_cast upgrader rewritten", "--replaces", "can_cast_0_9"]
    refused(up, *replace, now=T0, words=["can_cast_0_9 may not be replaced yet", "can be replaced from 2026-05-30",
                                         "(135 days left)"])
    later = "2026-06-01T09:00Z"
    assert "due: upgrader can_cast_0_9 (aten::can_cast) may be replaced: 180 days since version bump 10 on " \
           "2025-12-01" in up.ok("tick", now=later).out
    done = up.ok(*replace, "--json", now=later).json()
    assert done["replaced"] == "can_cast_0_9" and done["upgrader"]["name"] == "can_cast_0_10"
    shown = up.ok("upgraders", "show", "can_cast_0_9", "--json").json()
    assert shown["replaced_by"] == "can_cast_0_10"
    assert "can_cast_0_9" not in up.ok("tick", "--within", "400", now=later).out


def test_check_bc_covered_and_suggested(up, pytorch_release):
    old, new = pytorch_release("2.0.0") / "native_functions.yaml", pytorch_release("2.6.0") / "native_functions.yaml"
    before = up("check-bc", old, new, "--format", "json").json()
    by_op = {(f["operator"], f["kind"]): f for f in before["findings"]}
    can_cast = by_op[("aten::can_cast", "bc")]
    assert can_cast["severity"] == "error" and can_cast["suggested_upgrader"] == "can_cast_0_0"
    assert can_cast["version_map_entry"] == '{"aten::can_cast", {{1, "can_cast_0_0", "aten::' + CAN_CAST_OLD + '"}}}'
    assert "add upgrader can_cast_0_0" in can_cast["message"]
    removed = [f for f in before["findings"] if f["rule"] == "operator-removed"]
    assert removed and all(f["suggested_upgrader"] is None for f in removed)
    up.ok("upgraders", "add", "aten::can_cast", "--versions", "0-9", "--old-schema", CAN_CAST_OLD,
          "--bumped-on", "2025-12-01", "--reason", "can_cast renames from to from_", now=T0)
    after = up("check-bc", old, new, "--format", "json")
    data = after.json()
    covered = {(f["operator"], f["kind"]): f for f in data["findings"]}[("aten::can_cast", "bc")]
    assert covered["severity"] == "waived" and covered["upgrader"] == "can_cast_0_9"
    assert "Covered by upgrader can_cast_0_9 (versions 0-9, version bump 10 on 2025-12-01)" in covered["message"]
    assert data["summary"]["errors"] == before["summary"]["errors"] - 1
    assert data["summary"]["waived"] == before["summary"]["waived"] + 1
    # the next uncovered break continues from the recorded version
    elemt = {(f["operator"], f["kind"]): f for f in data["findings"]}[("aten::batch_norm_backward_elemt", "bc")]
    assert elemt["suggested_upgrader"] == "batch_norm_backward_elemt_0_10"
    text = up("check-bc", old, new).out
    assert "aten::can_cast [bc argument-renamed] Argument 0 was renamed from 'from' to 'from_'. Covered by " \
           "upgrader can_cast_0_9" in text


def test_core_breaks_are_never_covered(cli, tmp_path):
    cli.ok("import", SAMPLE / "native_functions.v1.yaml", "--tags-yaml", SAMPLE / "tags.yaml", "--label", "v1", now=T0)
    old_schema = "roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor"
    cli.ok("upgraders", "add", "aten::roll", "--versions", "0-0", "--old-schema", old_schema,
           "--bumped-on", "2026-01-01", "--reason", "dims lost its default", now=T0)
    results = {}
    for tags in ("", "  tags: core\n"):
        old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
        old.write_text(f"- func: {old_schema}\n{tags}")
        new.write_text(f"- func: {old_schema.replace('dims=[]', 'dims')}\n{tags}")
        found = cli("check-bc", old, new, "--format", "json", now=T0).json()["findings"]
        results[bool(tags)] = {(f["operator"], f["kind"]): f for f in found}[("aten::roll", "bc")]
    assert results[False]["severity"] == "waived" and results[False]["upgrader"] == "roll_0_0"
    core = results[True]
    assert core["severity"] == "error" and core["upgrader"] is None and core["suggested_upgrader"] is None
    assert "never waived" in core["message"]


def test_on_sqlite_and_postgres(make_cli, any_db_url):
    cli = make_cli(any_db_url, simulation=True)
    cli.ok("import", SAMPLE / "native_functions.v2.yaml", "--tags-yaml", SAMPLE / "tags.yaml", "--label", "v2", now=T0)
    cli.ok("upgraders", "add", "aten::add.Tensor", "--versions", "0-3", "--old-schema",
           "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "--bumped-on", "2020-05-01",
           "--reason", "test", now=T0)
    listed = cli.ok("upgraders", "list", "--json").json()
    assert [u["name"] for u in listed["upgraders"]] == ["add_Tensor_0_3"] and listed["current_version"] == 4
    assert cli.ok("tick", "--json", now=T0).json()["upgraders"]["due"][0]["name"] == "add_Tensor_0_3"
