"""The export-time check (opgov.export_check) and its CLI face, check-model on the same .pt2, apply
one policy: a warning on deprecating operators, a stop on deprecated ones, and the same runtimes."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

from conftest import REPO
from test_runtimes import NOW, executorch_dir, rt, runtimes_db  # noqa: F401 (fixtures)


def test_opgov_and_the_module_import_without_torch():
    code = "import sys; import opgov, opgov.export_check; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_the_function_and_check_model_agree(rt, torch_mod, tmp_path):
    from opgov.export_check import DeprecatedOperatorError, DeprecatingOperatorWarning, check_export

    torch = torch_mod

    class Net(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.hardtanh(x) + 1

    ep = torch.export.export(Net(), (torch.randn(2, 3),))
    archive = tmp_path / "net.pt2"
    torch.export.save(ep, str(archive))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing on its way out: no warning
        clean = check_export(ep, db=rt.url)
    assert set(clean.operators) == {"aten::hardtanh", "aten::add.Tensor"}
    cli = rt("check-model", archive, "--runtime", "executorch@1.3.0", "--format", "json").json()
    assert list(clean.runs_on) == cli["runtimes_running"] and clean.runs_on

    rt.ok("deprecate", "aten::hardtanh", "--reason", "test", "--replacement", "aten::clamp", now=NOW)
    for program in (ep, archive):
        with pytest.warns(DeprecatingOperatorWarning) as caught:
            check_export(program, db=rt.url)
        [message] = [str(w.message) for w in caught if issubclass(w.category, DeprecatingOperatorWarning)]
        assert "aten::hardtanh" in message and "2026-06-15" in message and "aten::clamp" in message
    warned = rt("check-model", archive, now=NOW)
    assert warned.code == 0 and "warning aten::hardtanh is being deprecated and becomes deprecated on 2026-06-15" \
        in warned.out

    rt.ok("mark-deprecated", "aten::hardtanh", now="2026-06-16T09:00Z")
    assert rt("check-model", archive).code == 1
    with pytest.raises(DeprecatedOperatorError) as stopped:
        check_export(archive, db=rt.url)
    text = str(stopped.value)
    assert "aten::hardtanh" in text and "2026-06-16" in text and "2026-12-13" in text and "aten::clamp" in text
