"""Write data/runtimes/executorch.json and data/runtimes/executorch/<version>.json from ExecuTorch's
sources at each release tag: the kernel registries (portable functions.yaml, optimized.yaml), the
operators kernels/prim_ops/register_prim_ops.cpp serves without a kernel yaml entry, the PyTorch
release of its pin, the tag's date, and each kernel's constraints (the dtypes it accepts per
argument, its rank and dtype checks: opgov.formats.et_sources), which `opgov runtimes add
executorch@VERSION` records by itself.

    .venv/bin/python scripts/build_runtime_data.py --git PATH/TO/executorch [--tags v1.3.0 ...]

PATH is a clone of github.com/pytorch/executorch holding the release tags (v0.1.0 … v1.4.1); the
release candidates (-rc) are skipped. Each release takes a few seconds.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from opgov.core.runtimes import version_key  # noqa: E402
from opgov.formats.et_sources import directory_reader, release_facts  # noqa: E402


PATHS = ["kernels/portable", "kernels/optimized", "kernels/prim_ops/register_prim_ops.cpp",
         ".ci/docker/ci_commit_pins/pytorch.txt", "runtime/core/exec_aten/util/scalar_type_util.h",
         "exir/dialects/edge/edge.yaml"]


def tree_at(git: Path, tag: str, into: Path) -> Path:
    """The files of ``tag`` that the facts come from, extracted under ``into`` (git archive)."""
    listed = subprocess.run(["git", "-C", str(git), "ls-tree", "--name-only", tag, *PATHS], capture_output=True,
                            text=True, check=True).stdout.split()
    archive = subprocess.run(["git", "-C", str(git), "archive", "--format=tar", tag, *listed], capture_output=True,
                             check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git", type=Path, required=True, help="a clone of pytorch/executorch with its tags")
    parser.add_argument("--tags", nargs="*", help="release tags (default: every vX.Y.Z tag)")
    args = parser.parse_args()
    tags = args.tags or [t for t in subprocess.run(["git", "-C", str(args.git), "tag"], capture_output=True,
                                                   text=True, check=True).stdout.split()
                         if re.fullmatch(r"v\d+\.\d+\.\d+", t)]
    tags.sort(key=lambda t: version_key(t[1:]))
    folder = REPO / "data" / "runtimes" / "executorch"
    folder.mkdir(parents=True, exist_ok=True)
    index_path = REPO / "data" / "runtimes" / "executorch.json"
    index = json.loads(index_path.read_text()) if index_path.is_file() else {"releases": {}}
    for tag in tags:
        version = tag[1:]
        with tempfile.TemporaryDirectory() as tmp:
            facts = release_facts(*directory_reader(tree_at(args.git, tag, Path(tmp))))
        date = subprocess.run(["git", "-C", str(args.git), "log", "-1", "--format=%cs", tag], capture_output=True,
                              text=True, check=True).stdout.strip()
        commit = subprocess.run(["git", "-C", str(args.git), "rev-list", "-n1", tag], capture_output=True,
                                text=True, check=True).stdout.strip()
        (folder / f"{version}.json").write_text(json.dumps(
            {"release": version, "tag": tag, "commit": commit, "kernels": facts["kernels"],
             "optimized_kernels": facts["optimized_kernels"], "edge": facts["edge"]}, separators=(",", ":"), sort_keys=True) + "\n")
        index["releases"][version] = {"released": date, "torch": facts["torch"], "served": facts["served"],
                                      "portable": facts["portable"], "optimized": facts["optimized"]}
        partial = sum(1 for k in facts["kernels"].values() if k.get("unknown") or k.get("unattributed"))
        print(f"{version}: {len(facts['portable'])} portable, {len(facts['optimized'])} optimized kernels "
              f"({partial} portable with constraints partly unknown), torch {facts['torch']}, {date}")
    index["releases"] = dict(sorted(index["releases"].items(), key=lambda kv: version_key(kv[0])))
    index["about"] = (
        "ExecuTorch releases, from the sources at each release tag (github.com/pytorch/executorch): "
        "the kernel registries (kernels/portable/functions.yaml, kernels/optimized/optimized.yaml), the "
        "operators kernels/prim_ops/register_prim_ops.cpp serves without a kernel yaml entry, the PyTorch "
        "release of .ci/docker/ci_commit_pins/pytorch.txt and the tag's date; each release's kernel "
        "constraints are in executorch/<version>.json. Written by scripts/build_runtime_data.py")
    index_path.write_text(json.dumps(index, indent=1) + "\n")
    print(f"wrote {index_path} and {folder}/")


if __name__ == "__main__":
    main()
