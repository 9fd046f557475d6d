"""Issue 42: what reading a ``.pt2`` inflates and builds is bounded, whatever the archive declares
(opgov.formats.pt2): a program member inflates to at most 64 MiB, an archive's programs to at most
128 MiB together, and a program of more than 2,000,000 JSON values is refused before it is
parsed. On the command line, the issue's archive (255 KB inflating to 250 MB of ``[{},{},…]``,
which grew a worker to 6.8 GB and killed the CLI with a MemoryError) is one line naming the file
and exit 2, in a process whose address space is limited."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from opgov.core.errors import BadInput
from opgov.formats import pt2
from tests.api.test_hostile_input import _archive, _empty_objects, _program
from tests.conftest import SAMPLE


def test_a_member_that_inflates_past_its_bound_is_refused_before_it_is_inflated(tmp_path):
    archive = _archive(tmp_path / "big.pt2", "m/models/m.json", [b"{}", b" " * (pt2.MAX_PROGRAM_BYTES - 1)])
    with pytest.raises(BadInput) as refused:
        pt2.read_pt2(archive)
    assert str(refused.value) == (f"{archive}!m/models/m.json: inflates to 67,108,865 bytes (as its header says): "
                                  "more than 64 MiB, the bound for a serialized program")


def test_a_program_of_millions_of_values_is_refused_before_it_is_parsed(tmp_path):
    archive = _archive(tmp_path / "values.pt2", "m/models/m.json", _empty_objects(9_000_004))  # 3M objects
    with pytest.raises(BadInput) as refused:
        pt2.read_pt2(archive)
    assert str(refused.value) == (f"{archive}!m/models/m.json: holds up to 6,000,003 JSON values: more than "
                                  "2,000,000, the bound for a serialized program")
    assert pt2.MAX_JSON_VALUES == 2_000_000


def test_an_archive_s_programs_are_bounded_together(tmp_path):
    path = tmp_path / "many.pt2"
    padding = b" " * (50 << 20)
    program = json.dumps(_program(["add.Tensor"])).encode()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for i in range(3):  # 3 × 50 MiB: each within its bound, 150 MiB together
            with archive.open(f"m/models/p{i}.json", "w") as out:
                out.write(program)
                out.write(padding)
    with pytest.raises(BadInput) as refused:
        pt2.read_pt2(path)
    message = str(refused.value)
    assert message.startswith(f"{path}!m/models/p2.json: inflates to ") and "bytes (as its header says)" in message
    assert message.endswith("left of 128 MiB, the bound for an archive's programs"), message


def test_a_deep_program_is_one_line(tmp_path):
    archive = _archive(tmp_path / "deep.pt2", "m/models/m.json", [b"[" * 100_000, b"]" * 100_000])
    with pytest.raises(BadInput, match="nested too deeply"):
        pt2.read_pt2(archive)


def test_the_issue_s_archive_on_the_command_line_is_one_line_and_exit_2(make_cli, sqlite_url, tmp_path):
    make_cli(sqlite_url).ok("import", SAMPLE / "native_functions.v1.yaml", "--label", "v1")
    archive = _archive(tmp_path / "inflated.pt2", "model/models/model.json", _empty_objects(250_000_000))
    assert archive.stat().st_size < 1_000_000
    values = _archive(tmp_path / "values.pt2", "model/models/model.json", _empty_objects(60_000_001))
    limit = 2 << 30  # the address space of the whole process: the old reader needed 6.8 GB

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    for path, words in ((archive, "inflates to 250,000,000 bytes"), (values, "holds up to 40,000,001 JSON values")):
        done = subprocess.run([sys.executable, "-m", "opgov", "--db", sqlite_url, "check-model", str(path)],
                              capture_output=True, text=True, timeout=120, preexec_fn=limited)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and "MemoryError" not in done.stderr
        assert str(path) in done.stderr and words in done.stderr, done.stderr
