"""The export-time check on programs torch.export really produced: a deprecating operator warns,
a deprecated one stops the export, each with its dates and replacement, and the registered
runtimes that run the program are named — from a database and from a real server alike."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from opgov.export_check import DeprecatedOperatorError, DeprecatingOperatorWarning, check_export, operators_of
from tests.api.test_api_serve import opgov, start


@pytest.fixture(scope="module")
def db(tmp_path_factory, pytorch_release, shared_dir):
    folder = pytorch_release("2.13.0")
    url = f"sqlite:///{tmp_path_factory.mktemp('export') / 'opgov.db'}"
    opgov(url, "db", "upgrade", "--simulation")
    opgov(url, "import", str(folder / "native_functions.yaml"), "--tags-yaml", str(folder / "tags.yaml"),
          "--label", "2.13.0", now="2026-01-01T00:00Z")
    opgov(url, "runtimes", "add", "executorch@1.3.0",
          "--ops", str(shared_dir / "executorch" / "1.3.0" / "portable-functions.yaml"), now="2026-01-01T00:00Z")
    opgov(url, "deprecate", "aten::glu", "--reason", "rarely used", "--replacement", "aten::sigmoid",
          now="2026-10-01T00:00Z")
    opgov(url, "mark-deprecated", "aten::glu", now="2026-10-20T00:00Z")
    # a simulation's clock never goes back: the events in the order of their times
    opgov(url, "deprecate", "aten::hardtanh", "--reason", "clamp says it", "--replacement", "aten::clamp",
          now="2026-11-01T00:00Z")
    return url


@pytest.fixture(scope="module")
def programs(torch_mod, tmp_path_factory):
    nn = torch_mod.nn

    class Gated(nn.Module):
        def forward(self, x):
            return nn.functional.glu(nn.functional.hardtanh(x), dim=-1).relu()

    class Plain(nn.Module):
        def forward(self, x):
            return nn.functional.hardtanh(x).relu()

    out = {}
    for name, module in (("gated", Gated()), ("plain", Plain())):
        program = torch_mod.export.export(module, (torch_mod.randn(2, 8),))
        archive = tmp_path_factory.mktemp("pt2") / f"{name}.pt2"
        torch_mod.export.save(program, archive)
        out[name] = (program, archive)
    return out


def test_a_deprecated_operator_stops_the_export_with_its_dates(db, programs):
    program, _ = programs["gated"]
    assert {"aten::glu", "aten::hardtanh", "aten::relu"} <= set(operators_of(program))
    with pytest.warns(DeprecatingOperatorWarning, match=r"aten::hardtanh is deprecating since 2026-11-01; it may "
                                                        r"become deprecated on 2026-11-15; use aten::clamp instead"):
        with pytest.raises(DeprecatedOperatorError) as stopped:
            check_export(program, db=db)
    message = str(stopped.value)
    assert "aten::glu is deprecated since 2026-10-20; it may become deleted on 2027-04-18; use aten::sigmoid instead" \
        == message
    assert stopped.value.verdict.errors == (message,)


def test_a_deprecating_operator_only_warns_and_the_runtimes_are_named(db, programs):
    program, archive = programs["plain"]
    with pytest.warns(DeprecatingOperatorWarning):
        verdict = check_export(program, db=db)
    assert verdict.errors == () and len(verdict.warnings) == 1
    # the same answer as `opgov check-model` gives for that runtime, on the archive torch saved
    done = subprocess.run([sys.executable, "-m", "opgov", "--db", db, "check-model", str(archive), "--runtime",
                           "executorch@1.3.0", "--format", "json"], capture_output=True, text=True, timeout=120)
    assert json.loads(done.stdout)["runs"] == ("executorch@1.3.0" in verdict.runs_on)
    assert verdict.runs_on == ("executorch@1.3.0",)


def test_a_pt2_archive_through_a_server(db, programs):
    _, archive = programs["gated"]
    server = start(db)
    try:
        with pytest.warns(DeprecatingOperatorWarning):
            verdict = check_export(archive, server=server.url, strict=False)
    finally:
        server.stop()
    assert sorted(n["op"] for n in verdict.lifecycle) == ["aten::glu", "aten::hardtanh"]
    assert len(verdict.errors) == 1 and "aten::sigmoid" in verdict.errors[0]


def test_the_module_imports_without_torch():
    code = "import sys, opgov.export_check; assert 'torch' not in sys.modules; print('ok')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr
