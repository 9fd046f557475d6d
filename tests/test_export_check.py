"""The export-time check (opgov.export_check): torch.export users are warned on deprecating operators
and stopped on deprecated ones, with the dates and the replacement, against a database or a server."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

from conftest import REPO
from test_runtimes import NOW, executorch_dir, net_archives, rt, runtimes_db  # noqa: F401 (fixtures)


def test_opgov_and_the_module_import_without_torch():
    code = ("import sys; import opgov, opgov.export_check; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def _exported(torch):
    class Net(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.hardtanh(x) + 1

    return torch.export.export(Net(), (torch.randn(2, 3),))


def test_warns_then_stops_on_a_database(rt, torch_mod, tmp_path):
    from opgov.export_check import DeprecatedOperatorError, DeprecatingOperatorWarning, check_export

    ep = _exported(torch_mod)
    archive = tmp_path / "net.pt2"
    torch_mod.export.save(ep, str(archive))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing on its way out: no warning
        clean = check_export(ep, db=rt.url)
    assert set(clean.operators) == {"aten::hardtanh", "aten::add.Tensor"}
    # the runtimes that run it are the ones check-model names for the same archive
    cli = rt("check-model", archive, "--runtime", "executorch@1.3.0", "--format", "json")
    assert clean.runtimes_running == cli.json()["runtimes_running"] and clean.runtimes_running

    rt.ok("deprecate", "aten::hardtanh", "--reason", "test", "--replacement", "aten::clamp", now=NOW)
    for program in (ep, archive):
        with pytest.warns(DeprecatingOperatorWarning) as caught:
            result = check_export(program, db=rt.url)
        [message] = [str(w.message) for w in caught if issubclass(w.category, DeprecatingOperatorWarning)]
        assert message == ("aten::hardtanh is deprecating since 2026-06-01; deprecated from 2026-06-15; "
                           "use aten::clamp instead")
        assert result.deprecating == ["aten::hardtanh"] and result.runtimes_running == clean.runtimes_running

    # the CLI face, check-model on the same archive, applies the same policy: a warning, exit 0
    warned = rt("check-model", archive, now=NOW)
    assert warned.code == 0 and "warning aten::hardtanh is being deprecated and becomes deprecated on 2026-06-15" in warned.out

    rt.ok("mark-deprecated", "aten::hardtanh", now="2026-06-16T09:00Z")
    assert rt("check-model", archive).code == 1  # ... and stops on deprecated
    with pytest.raises(DeprecatedOperatorError) as stopped:
        check_export(ep, db=rt.url)
    assert stopped.value.operators == ["aten::hardtanh"]
    assert str(stopped.value) == ("the program uses operators the policy stops: aten::hardtanh is deprecated "
                                  "since 2026-06-16; deleted from 2026-12-13; use aten::clamp instead")


def test_the_same_answer_from_a_server(rt, torch_mod, tmp_path):
    """Through a real `opgov serve` (POST /api/v1/export-check) as from its database."""
    from opgov.export_check import DeprecatedOperatorError, DeprecatingOperatorWarning, check_export
    from tests.api.test_api_serve import start

    ep = _exported(torch_mod)
    rt.ok("deprecate", "aten::hardtanh", "--reason", "test", "--replacement", "aten::clamp", now=NOW)
    with pytest.warns(DeprecatingOperatorWarning) as local_warning:
        local = check_export(ep, db=rt.url)
    served = start(rt.url)
    try:
        with pytest.warns(DeprecatingOperatorWarning) as remote_warning:
            remote = check_export(ep, server=served.url)
        assert remote == local
        assert [str(w.message) for w in remote_warning] == [str(w.message) for w in local_warning]
        with pytest.raises(RuntimeError, match="HTTP 401"):
            check_export(ep, server=served.url, token="not-a-token")
        rt.ok("mark-deprecated", "aten::hardtanh", now="2026-06-16T09:00Z")
        with pytest.raises(DeprecatedOperatorError, match="deprecated since 2026-06-16; deleted from 2026-12-13; "
                                                          "use aten::clamp instead"):
            check_export(ep, server=served.url)
    finally:
        served.stop()
