"""The export-time check down to the arguments: programs exported in memory with torch 2.13.0,
checked by `opgov.export_check.check_export(..., runtime=...)` against runtimes following releases
derived from PyTorch's real 2.13.0 native_functions.yaml (tests/services/test_model_args.py builds
them): the calls sent are the ones torch's own serializer writes, and each verdict is the one
`check-model` gives for the archive torch saves of the same program."""

from __future__ import annotations

import shutil
import warnings

import pytest

from opgov.core.errors import BadInput
from opgov.export_check import ArgumentChangeWarning, IncompatibleArgumentsError, check_export
from opgov.formats.pt2 import archive_calls, argument_value, graph_calls
from tests.api.test_api_serve import start
from tests.services.test_model_args import (CUMSUM_2_13, NOW, args_db, releases,  # noqa: F401 - fixtures
                                             saved_archives, small_programs)


@pytest.fixture(scope="module")
def exported(torch_mod, tmp_path_factory):
    """Small modules exported in memory with this torch (2.13.0), and the archives torch saves of them."""
    programs = small_programs(torch_mod)
    return programs, saved_archives(torch_mod, programs, tmp_path_factory.mktemp("exported"))


@pytest.fixture(scope="module")
def programs(exported):
    return exported[0]


@pytest.fixture(scope="module")
def saved(exported):
    return exported[1]


@pytest.fixture
def db(args_db, tmp_path):  # noqa: F811
    path = tmp_path / "copy.db"
    shutil.copyfile(args_db, path)
    return f"sqlite:///{path}"


def problems_of(cli_json: dict) -> list[tuple]:
    return [(p["rule"], p["severity"], p["op"], p["argument"], p["message"]) for p in cli_json["problems"]]


def check_model(make_cli, db: str, archive, runtime: str) -> dict:
    cli = make_cli(db, upgrade=False)
    [arguments] = cli("check-model", archive, "--runtime", runtime, "--format", "json").json()["arguments"]
    return arguments


def test_the_calls_sent_are_those_torch_serializes(programs, saved, torch_mod):
    for name, program in programs.items():
        [(version, written)] = archive_calls(str(saved[name]), name)
        assert version == torch_mod.__version__  # what check_export sends as the program's torch
        sent = graph_calls(program)
        assert [(c["node"], c["op"], [(a["name"], a["keyword"]) for a in c["args"]]) for c in sent] == \
            [(c.node, c.op, [(a.name, a.keyword) for a in c.args]) for c in written]
        assert [[argument_value(a["arg"]) for a in c["args"]] for c in sent] == \
            [[(a.value, a.text) for a in c.args] for c in written]
        assert [tuple(c["dtypes"]) for c in sent] == [c.dtypes for c in written]
        [(_, raw)] = archive_calls(str(saved[name]), name, raw=True)
        assert sent == raw  # the very JSON torch's serializer writes


def test_a_new_argument_on_an_older_runtime_stops_the_export(db, programs, saved, make_cli, torch_mod):
    with pytest.raises(IncompatibleArgumentsError) as stopped:
        check_export(programs["gelu"], db=db, runtime="engine@1.0")
    message = str(stopped.value)
    assert message.startswith("engine@1.0 cannot run the program as exported: argument-unknown: gelu passes "
                              "approximate='tanh' to aten::gelu")
    assert "2.12.1" in message and "2.13.0" in message
    arguments = stopped.value.verdict.arguments
    assert (arguments["torch_version"], arguments["model_release"], arguments["runtime_release"]) == \
        (torch_mod.__version__, "2.13.0", "2.12.1")
    # the same verdict check-model gives for the archive torch saved of the program
    assert problems_of(arguments) == problems_of(check_model(make_cli, db, saved["gelu"], "engine@1.0"))
    # the archive torch saved, checked by its path: the same
    with pytest.raises(IncompatibleArgumentsError) as again:
        check_export(saved["gelu"], db=db, runtime="engine@1.0")
    assert str(again.value) == message
    # strict=False answers instead; a runtime of the program's own release has nothing to say
    verdict = check_export(programs["gelu"], db=db, runtime="engine@1.0", strict=False)
    assert len(verdict.errors) == 1 and "approximate" in verdict.errors[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_export(programs["gelu"], db=db, runtime="2.13.0").arguments["problems"] == []


def test_a_changed_default_warns_and_the_export_goes_on(db, programs, saved, make_cli):
    for runtime in ("engine@1.0", "2.12.1"):  # a snapshot label stands for torch of that release
        with pytest.warns(ArgumentChangeWarning, match=r"default-changed: leaky_relu leaves negative_slope of "
                                                       r"aten::leaky_relu to its default, which is 0.01 in torch "
                                                       r"2.13.0 and 0.02 in 2.12.1"):
            verdict = check_export(programs["leaky"], db=db, runtime=runtime)
        assert verdict.errors == () and len(verdict.warnings) == 1
        assert problems_of(verdict.arguments) == problems_of(check_model(make_cli, db, saved["leaky"], runtime))
    assert {d["op"]: d["dtypes"] for d in verdict.arguments["dtypes"]}["aten::leaky_relu"] == ["float16"]


def test_a_renamed_argument_stops_the_export_unless_an_upgrader_covers_it(db, programs, make_cli):
    with pytest.raises(IncompatibleArgumentsError, match=r"schema-bc-break: aten::cumsum broke backward "
                                                         r"compatibility between torch 2.13.0 and 2.14.0"):
        check_export(programs["cumsum"], db=db, runtime="engine@2.0")
    make_cli(db, upgrade=False).ok("upgraders", "add", "aten::cumsum", "--versions", "0-9", "--old-schema",
                                   CUMSUM_2_13, "--bumped-on", "2026-05-01", "--reason", "dim renamed axis", now=NOW)
    with pytest.warns(ArgumentChangeWarning, match="runs only through the upgrader cumsum_0_9"):
        verdict = check_export(programs["cumsum"], db=db, runtime="engine@2.0")
    assert [p["upgrader"] for p in verdict.arguments["problems"]] == ["cumsum_0_9"]


def test_through_a_server_and_without_a_runtime(db, programs):
    server = start(db)
    try:
        with pytest.raises(IncompatibleArgumentsError, match="approximate='tanh'"):
            check_export(programs["gelu"], server=server.url, runtime="engine@1.0")
        # an old client (no runtime) is answered as before: operators and lifecycle only
        verdict = check_export(programs["gelu"], server=server.url)
        assert verdict.arguments is None and "aten::gelu" in verdict.operators
        with pytest.raises(BadInput, match="unknown runtime engine@9"):
            check_export(programs["gelu"], server=server.url, runtime="engine@9")
    finally:
        server.stop()
    with pytest.raises(BadInput, match="neither a registered NAME@VERSION nor a snapshot"):
        check_export(programs["gelu"], db=db, runtime="2.99")
