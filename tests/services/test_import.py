"""`opgov import`, `opgov ops list/show`: snapshots, schema history, idempotence, bad input."""

from __future__ import annotations


import pytest

from conftest import SAMPLE, db_fingerprint

V1, V2, TAGS = SAMPLE / "native_functions.v1.yaml", SAMPLE / "native_functions.v2.yaml", SAMPLE / "tags.yaml"


def test_import_records_added_removed_changed(make_cli, any_db_url):
    cli = make_cli(any_db_url)
    first = cli.ok("import", V1, "--tags-yaml", TAGS, "--label", "v1", "--json").json()
    assert first["label"] == "v1"
    assert "aten::add.Tensor" in first["added"] and first["removed"] == [] and first["changed"] == []
    assert first["operators"] == len(first["added"])
    second = cli.ok("import", V2, "--tags-yaml", TAGS, "--label", "v2", "--json").json()
    assert second["added"] == ["aten::fused_rms_norm"]
    assert sorted(second["removed"]) == ["aten::flatten.using_names", "aten::sum.dim_DimnameList",
                                         "aten::unbind.Dimname"]
    assert sorted(second["changed"]) == ["aten::clamp_max", "aten::glu", "aten::roll"]

    listed = {o["name"]: o for o in cli.ok("ops", "list", "--json").json()}
    assert "aten::unbind.Dimname" not in listed
    assert listed["aten::roll"]["schema"] == "roll(Tensor self, SymInt[1] shifts, int[1] dims) -> Tensor"
    assert listed["aten::fused_rms_norm"]["needs_review"] is True
    assert listed["aten::add.Tensor"]["needs_review"] is False
    everything = {o["name"]: o for o in cli.ok("ops", "list", "--all", "--json").json()}
    gone = everything["aten::unbind.Dimname"]
    assert gone["present"] is False
    assert gone["schema"] == "unbind.Dimname(Tensor(a -> *) self, Dimname dim) -> Tensor(a)[]"  # last schema kept

    shown = cli.ok("ops", "show", "aten.roll.default", "--json").json()
    assert [h["snapshot"] for h in shown["history"]] == ["v1", "v2"]
    assert [h["changed"] for h in shown["history"]] == [False, True]
    assert shown["history"][0]["schema"].endswith("int[1] dims=[]) -> Tensor")


def test_reimport_is_idempotent(cli):
    cli.ok("import", V1, "--label", "v1")
    before = db_fingerprint(cli.url)
    again = cli.ok("import", V1, "--label", "v1", "--json").json()
    assert again["added"] == again["removed"] == again["changed"] == []
    assert db_fingerprint(cli.url) == before
    relabelled = cli.ok("import", V1, "--label", "v1-again", "--json").json()
    assert relabelled["added"] == relabelled["removed"] == relabelled["changed"] == []


def test_list_filters(cli):
    cli.ok("import", V1, "--label", "v1")
    core = cli.ok("ops", "list", "--category", "core", "--json").json()
    assert core and all(o["category"] == "core" for o in core)
    assert all("core" in o["tags"] for o in core)
    pointwise = cli.ok("ops", "list", "--tag", "pointwise", "--json").json()
    assert pointwise and all("pointwise" in o["tags"] for o in pointwise)
    table = cli.ok("ops", "list", "--category", "core").out
    assert "aten::add.Tensor" in table


@pytest.mark.parametrize("spelling", ["aten::add.Tensor", "add.Tensor", "aten.add.Tensor"])
def test_show_accepts_every_spelling(cli, spelling):
    cli.ok("import", V1, "--label", "v1")
    assert cli.ok("ops", "show", spelling, "--json").json()["name"] == "aten::add.Tensor"


def test_show_default_overload_spellings(cli):
    cli.ok("import", V1, "--label", "v1")
    for spelling in ("aten.relu.default", "aten::relu", "relu"):
        assert cli.ok("ops", "show", spelling, "--json").json()["name"] == "aten::relu"


def test_unknown_operator_suggests_close_names(cli):
    cli.ok("import", V1, "--label", "v1")
    result = cli("ops", "show", "aten::add.Tensr")
    assert result.code == 2
    assert "unknown operator aten::add.Tensr" in result.err and "aten::add.Tensor" in result.err
    assert len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize("mutation, message", [
    (lambda t: t.replace("- func: relu(", "- func: relu(Tensor self -> Tensor\n- func: relux("), "relu(Tensor self -> Tensor"),
    (lambda t: t + "\n- func: add.Tensor(Tensor self) -> Tensor\n", "duplicate operator add.Tensor"),
    (lambda t: t + "\n- variants: function\n", "no 'func:'"),
    (lambda t: t + "\n- func: x(Tensor self) -> Tensor\n  tags: [core\n", "malformed YAML"),
    (lambda t: t + "\n- func: x(Tensor self) -> Tensor\n  tags: undeclared_tag\n", "undeclared_tag"),
])
def test_bad_input_writes_nothing(cli, tmp_path, mutation, message):
    cli.ok("import", V1, "--tags-yaml", TAGS, "--label", "v1")
    before = db_fingerprint(cli.url)
    bad = tmp_path / "native_functions.yaml"
    bad.write_text(mutation(V1.read_text()))
    result = cli("import", bad, "--tags-yaml", TAGS, "--label", "v2")
    assert result.code == 2, result.err
    assert message in result.err and str(bad) in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert db_fingerprint(cli.url) == before


def test_missing_file_is_bad_input(cli, tmp_path):
    result = cli("import", tmp_path / "missing.yaml", "--label", "x")
    assert result.code == 2 and "no such file" in result.err


def test_database_behind_says_to_upgrade(make_cli, sqlite_url):
    cli = make_cli(sqlite_url, upgrade=False)
    result = cli("ops", "list")
    assert result.code == 2 and "opgov db upgrade" in result.err
    cli.ok("db", "upgrade", "0002")
    result = cli("ops", "list")
    assert result.code == 2 and "0002" in result.err and "opgov db upgrade" in result.err


def test_log_records_import(cli):
    cli.ok("import", V1, "--label", "v1")
    cli.ok("import", V2, "--label", "v2")
    events = cli.ok("log", "aten::roll", "--json").json()
    assert [e["action"] for e in events] == ["operator.schema_changed"]  # the baseline is one event
    assert events[0]["before"]["schema"].endswith("dims=[]) -> Tensor")


def test_replay_real_releases(make_cli, sqlite_url, pytorch_versions, pytorch_release):
    cli = make_cli(sqlite_url)
    results = {}
    for version in pytorch_versions:
        folder = pytorch_release(version)
        results[version] = cli.ok("import", folder / "native_functions.yaml", "--tags-yaml", folder / "tags.yaml",
                                  "--label", version, "--json").json()
    listed = {o["name"]: o for o in cli.ok("ops", "list", "--all", "--json").json()}
    removed = results["2.13.0"]["removed"]
    entries_removed = [n for n in removed if listed[n]["autogen_of"] is None]
    assert len(entries_removed) == 108  # the named-tensor overloads
    for name in entries_removed:  # gone from the file, kept with their last schema
        assert listed[name]["present"] is False and listed[name]["schema"]
    assert sum("Dimname" in listed[n]["schema"] for n in entries_removed) == 106
    assert "aten::unbind.Dimname" in entries_removed and "aten::align_tensors" in entries_removed
    assert len([n for n in results["2.13.0"]["added"] if listed[n]["autogen_of"] is None]) == 1
    # the 2.13.0 snapshot holds what the file holds
    present = [o for o in listed.values() if o["present"]]
    assert sum(1 for o in present if o["autogen_of"] is None) == 2584
    assert sum(1 for o in present if "core" in o["tags"]) == 193


def test_concurrent_imports_are_serialised(make_cli, any_db_url):
    """Two bots importing at once: the second waits for the first and diffs against it."""
    import threading

    from opgov.core.clock import SystemClock
    from opgov.db.engine import make_engine, resolve_url, transaction
    from opgov.reads.common import Ctx
    from opgov.services.imports import import_snapshot

    make_cli(any_db_url)  # migrated
    engine = make_engine(resolve_url(any_db_url))
    results, errors = {}, []
    barrier = threading.Barrier(2)

    def run(path, label):
        barrier.wait()
        try:
            with transaction(engine, orm=False) as conn:
                results[label] = import_snapshot(Ctx(conn, "bot", SystemClock()), str(path), label=label)
        except Exception as err:  # noqa: BLE001
            errors.append(err)

    # labels that are not versions: either may come second (v2 then v1 would be refused as older)
    threads = [threading.Thread(target=run, args=a) for a in ((V1, "nightly-a"), (V2, "nightly-b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    engine.dispose()
    assert errors == []
    assert sorted(r.baseline for r in results.values()) == [False, True]  # exactly one baseline
    second = next(r for r in results.values() if not r.baseline)
    assert len(second.added) + len(second.removed) + len(second.changed) > 0  # a real diff


@pytest.mark.parametrize("args", [[], ["--json"]])
def test_import_loads_only_its_own_area(sqlite_url, tmp_path, args):
    # its request is checked (pydantic), its result is a dataclass (opgov.results.imports) printed with the
    # standard library's json; the other areas' declarations, the server and the templates stay unloaded
    import json
    import os
    import subprocess
    import sys

    from opgov.db.engine import make_engine, upgrade

    upgrade(make_engine(sqlite_url, create=True))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPGOV_")}
    env.update(HOME=str(tmp_path), OPGOV_ACTOR="bot")
    argv = ["--db", sqlite_url, "import", str(V1), "--tags-yaml", str(TAGS), "--label", "v1", *args]
    probe = ("import json, sys\nfrom opgov.cli.main import run\n"
             f"try:\n    run({argv!r})\nexcept SystemExit:\n    pass\n"
             "sys.stderr.write(json.dumps(sorted(sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=120)
    assert "v1" in proc.stdout, proc.stderr
    loaded = set(json.loads(proc.stderr.strip().splitlines()[-1]))
    assert "opgov.usecases.imports" in loaded
    assert not loaded & {"fastapi", "uvicorn", "jinja2", "opgov.results.governance", "opgov.usecases.governance",
                         "opgov.usecases.runtimes", "opgov.services.governance"}
