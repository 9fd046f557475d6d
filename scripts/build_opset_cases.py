"""Write the cases of tests/web/opset_cases/: each a choice and what `opgov opset build` gives for
it (computed here, by Python, on real data), which the page must show too.

    .venv/bin/python scripts/build_opset_cases.py [--shared /work/shared]

Builds the two worlds of tests/web/opset_parity.py (PyTorch 2.13.0's registry, the 2023 review,
opgov's rules file; and the same with the facts `opgov decomps import-torch` traces from the
installed torch) in a temporary folder, and rewrites every case file. Run it again when opgov's
answers change on purpose; tests/web/test_opset_cases.py says when they differ.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.web.opset_parity import (  # noqa: E402
    CASES, SHARED, dump_case, make_world, python_result, summary, torch_version)

# (world, name, what it shows, preset, decompose, keep)
CHOICES = [
    ("rules", "core-aten", "the default preset", "core-aten", [], []),
    ("rules", "no-decomp-decompose-linear-addmm-keep-inplace",
     "decomposing two operators from nothing, keeping an in-place one", "no-decomp",
     ["aten::linear", "aten::addmm"], ["aten::add_.Tensor"]),
    ("rules", "full-decomp-keep-addmm-linear", "keeping decomposable operators", "full-decomp", [],
     ["aten::addmm", "aten::linear"]),
    ("rules", "core-aten-decompose-roll-keep-hardswish", "decomposing a core operator, keeping a decomposable one",
     "core-aten", ["aten::roll"], ["aten::hardswish"]),
    ("rules", "full-decomp-decompose-assert", "decomposing a graph operator (no rule), keeping roll", "full-decomp",
     ["aten::_assert_tensor_metadata"], ["aten::roll"]),
    ("rules", "core-aten-decompose-without-rule", "decomposing an operator no rule describes", "core-aten",
     ["aten::native_layer_norm"], []),
    ("rules", "both-decomposed-and-kept", "refused: one operator decomposed and kept", "core-aten",
     ["aten::linear"], ["aten::linear"]),
    ("torch", "core-aten", "the default preset, exact for torch", "core-aten", [], []),
    ("torch", "full-decomp", "everything torch can decompose", "full-decomp", [], []),
    ("torch", "core-aten-keep-decomposable", "keeping decomposable operators", "core-aten", [],
     ["aten::hardswish", "aten::upsample_bilinear2d.vec", "aten::linear"]),
    ("torch", "core-aten-decompose-core", "decomposing core operators torch can decompose (var.correction → prims)",
     "core-aten", ["aten::native_layer_norm", "aten::var.correction"], []),
    ("torch", "no-decomp-decompose-roll-hardswish-keep-linear", "adding torch's decompositions to no-decomp",
     "no-decomp", ["aten::roll", "aten::hardswish"], ["aten::linear"]),
    ("torch", "full-decomp-keep-roll", "keeping a core-by-decision operator torch decomposes", "full-decomp", [],
     ["aten::roll"]),
    ("torch", "refused-no-torch-decomposition", "refused: torch has no decomposition for it", "core-aten",
     ["aten::convolution"], []),
    ("torch", "no-decomp", "nothing decomposed: what torch.export removes by itself is not listed, what it "
     "becomes is", "no-decomp", [], []),
    ("torch", "refused-keep-removed-by-torch", "refused: torch decomposes batch_norm at export whatever the table "
     "says", "no-decomp", [], ["aten::batch_norm"]),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=SHARED,
                        help="the folder of the real data (pytorch/, decisions/, models/)")
    args = parser.parse_args()
    models = args.shared / "models"
    CASES.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        dbs = {world: make_world(world, Path(tmp), args.shared) for world in {c[0] for c in CHOICES}}
        for old in CASES.glob("*.json"):
            old.unlink()
        for world, name, what, preset, decompose, keep in CHOICES:
            choice = {"preset": preset, "decompose": decompose, "keep": keep}
            case = {"world": world, "torch": torch_version(dbs[world]), "what": what, "choice": choice,
                    "expected": summary(python_result(dbs[world], choice, models))}
            (CASES / f"{world}-{name}.json").write_text(dump_case(case))
            print(f"{world}-{name}: {len(case['expected'].get('operators', []))} operators"
                  + (f", refused: {case['expected']['error']}" if "error" in case["expected"] else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
