"""Write data/runtimes/executorch.json: for each ExecuTorch release of ../shared/executorch, the
operators it serves outside its kernel yaml (register_prim_ops.cpp) and the PyTorch release its
kernels follow (its PyTorch pin), which `opgov runtimes add executorch@VERSION` records by itself.

    .venv/bin/python scripts/build_runtime_data.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from opgov.core.runtimes import version_key  # noqa: E402
from opgov.formats.runtime_files import prim_ops, pytorch_pin  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    args = parser.parse_args()
    folder = args.shared / "executorch"
    releases = {}
    for release in sorted((p for p in folder.iterdir() if p.is_dir()), key=lambda p: version_key(p.name)):
        cpp, pin = release / "register_prim_ops.cpp", release / "pytorch-pin.txt"
        releases[release.name] = {"torch": pytorch_pin(pin.read_text(), str(pin)),
                                  "served": list(prim_ops(cpp.read_text(), str(cpp)))}
    out = REPO / "data" / "runtimes" / "executorch.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "about": "ExecuTorch releases: the operators kernels/prim_ops/register_prim_ops.cpp serves without a "
                 "kernel yaml entry, and the PyTorch release of .ci/docker/ci_commit_pins/pytorch.txt; written "
                 "by scripts/build_runtime_data.py",
        "releases": releases}, indent=1) + "\n")
    summary = ", ".join(f"{v} ({len(r['served'])} served, torch {r['torch']})" for v, r in releases.items())
    print(f"wrote {out}: {summary}")


if __name__ == "__main__":
    main()
