"""Write data/runtimes/executorch.json and data/runtimes/executorch/<version>.json from ExecuTorch's
sources at each release tag: the kernel registries (portable functions.yaml, optimized.yaml), the
operators kernels/prim_ops/register_prim_ops.cpp serves without a kernel yaml entry, the PyTorch
release of its pin, the tag's date, and each kernel's constraints (the dtypes it accepts per
argument, its rank and dtype checks: opgov.formats.et_sources), which `opgov runtimes add
executorch@VERSION` records by itself.

    .venv/bin/python scripts/build_runtime_data.py --git PATH/TO/executorch [--tags v1.3.0 ...]
    .venv/bin/python scripts/build_runtime_data.py --git PATH/TO/executorch --pre-release main --as 1.5.0

PATH is a clone of github.com/pytorch/executorch holding the release tags (v0.1.0 … v1.4.1); the
release candidates (-rc) are skipped. Each release takes a few seconds.

--pre-release REF --as VERSION reads a release that has no tag yet from the tree at REF (a branch or
commit) whose version.txt names VERSION: the data says so (``pre_release``: the ref, its commit and
the commit's date; no release date), and `opgov runtimes add` repeats it. The shipped 1.5.0 is read
so, from main at cff6f4dd32e6 (2026-08-22): the clone opgov read has no v1.5.0 tag.
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
         "exir/dialects/edge/edge.yaml", "exir/passes/remove_mixed_type_operators.py"]


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
    parser.add_argument("--pre-release", metavar="REF", help="read a release with no tag yet from this ref (with --as)")
    parser.add_argument("--as", dest="version", metavar="VERSION", help="the release --pre-release's tree is (its version.txt)")
    args = parser.parse_args()
    if bool(args.pre_release) != bool(args.version):
        parser.error("--pre-release REF and --as VERSION go together")
    if args.pre_release:
        said = subprocess.run(["git", "-C", str(args.git), "show", f"{args.pre_release}:version.txt"],
                              capture_output=True, text=True, check=True).stdout.strip()
        if said != args.version:
            parser.error(f"{args.pre_release}'s version.txt says {said!r}, not {args.version!r}")
    tags = [args.pre_release] if args.pre_release else args.tags or [t for t in subprocess.run(["git", "-C", str(args.git), "tag"], capture_output=True,
                                                   text=True, check=True).stdout.split()
                         if re.fullmatch(r"v\d+\.\d+\.\d+", t)]
    tags.sort(key=lambda t: version_key(t[1:]))
    folder = REPO / "data" / "runtimes" / "executorch"
    folder.mkdir(parents=True, exist_ok=True)
    index_path = REPO / "data" / "runtimes" / "executorch.json"
    index = json.loads(index_path.read_text()) if index_path.is_file() else {"releases": {}}
    for tag in tags:
        version = args.version if args.pre_release else tag[1:]
        with tempfile.TemporaryDirectory() as tmp:
            facts = release_facts(*directory_reader(tree_at(args.git, tag, Path(tmp))))
        date = subprocess.run(["git", "-C", str(args.git), "log", "-1", "--format=%cs", tag], capture_output=True,
                              text=True, check=True).stdout.strip()
        commit = subprocess.run(["git", "-C", str(args.git), "rev-list", "-n1", tag], capture_output=True,
                                text=True, check=True).stdout.strip()
        entry = {"released": date, "torch": facts["torch"], "served": facts["served"],
                 "portable": facts["portable"], "optimized": facts["optimized"]}
        release = {"release": version, "tag": tag, "commit": commit, "kernels": facts["kernels"],
                   "optimized_kernels": facts["optimized_kernels"], "edge": facts["edge"],
                   "mixed_types": facts["mixed_types"]}
        if args.pre_release:  # no tag, no release date: the tree it was read from, said as such
            entry["released"] = None
            entry["pre_release"] = release["pre_release"] = {"ref": tag, "commit": commit, "date": date}
            release["tag"] = None
        (folder / f"{version}.json").write_text(json.dumps(release, separators=(",", ":"), sort_keys=True) + "\n")
        index["releases"][version] = entry
        partial = sum(1 for k in facts["kernels"].values() if k.get("unknown") or k.get("unattributed"))
        print(f"{version}: {len(facts['portable'])} portable, {len(facts['optimized'])} optimized kernels "
              f"({partial} portable with constraints partly unknown), torch {facts['torch']}, {date}")
    index["releases"] = dict(sorted(index["releases"].items(), key=lambda kv: version_key(kv[0])))
    index["about"] = (
        "ExecuTorch releases, from the sources at each release tag (github.com/pytorch/executorch): "
        "the kernel registries (kernels/portable/functions.yaml, kernels/optimized/optimized.yaml), the "
        "operators kernels/prim_ops/register_prim_ops.cpp serves without a kernel yaml entry, the PyTorch "
        "release of .ci/docker/ci_commit_pins/pytorch.txt and the tag's date; each release's kernel "
        "constraints are in executorch/<version>.json. A release with `pre_release` has no tag in the sources "
        "read: it was read from the tree at that ref and commit (whose version.txt names the release), has "
        "no release date, and may differ from the release as tagged. Written by scripts/build_runtime_data.py")
    index_path.write_text(json.dumps(index, indent=1) + "\n")
    print(f"wrote {index_path} and {folder}/")


if __name__ == "__main__":
    main()
