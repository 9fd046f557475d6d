"""Write the torch facts opgov ships: what one torch release's export does, traced from that torch.

    .venv/bin/python scripts/build_torch_facts.py [--out data/torch] [--budget 3600] [--workers 2]
    .venv/bin/python scripts/build_torch_facts.py --retrace-unknown   # again, the operators no sample exported
    .venv/bin/python scripts/build_torch_facts.py --retrace-forced    # again, those export decomposes by itself
    .venv/bin/python scripts/build_torch_facts.py --retrace-ops aten::zeros_like.out ...  # again, these

Run it with the torch release to record installed (in any virtual environment where opgov is
importable: ``PYTHONPATH=. /other/venv/bin/python scripts/build_torch_facts.py``). It traces the
whole decomposition table as ``opgov decomps import-torch`` does (opgov.formats.torch_decomps:
torch.export's default table, torch._decomp's other decompositions, the operators export
decomposes whatever the table says and the CompositeImplicitAutograd ones it can preserve) and
writes ``data/torch/torch-<release>.json``, which opgov loads by name when a database holds no
facts of its own (opgov/resources.py, opgov/reads/torch.py).
tests/formats/test_shipped_torch_facts.py checks that the file of the installed release is what
this script writes now.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from opgov.formats.torch_decomps import facts_file_text, read_torch_table  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "data" / "torch")
    parser.add_argument("--budget", type=float, default=3600.0, help="seconds for the whole trace")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--retrace-unknown", action="store_true",
                        help="trace again only the operators export decomposes that the release's file records as "
                             "unknown, keeping the rest")
    parser.add_argument("--retrace-forced", action="store_true",
                        help="trace again only the operators export decomposes whatever the table says, keeping the rest")
    parser.add_argument("--retrace-ops", nargs="+", metavar="OP", default=[],
                        help="trace again these operators (aten::zeros_like.out), keeping the rest")
    args = parser.parse_args()
    previous = None
    only = None
    if args.retrace_unknown or args.retrace_forced or args.retrace_ops:
        import importlib.metadata

        # (opgov's reads need its dependencies: a whole run needs only torch where it runs)
        from opgov.reads.torch import facts_of

        release = importlib.metadata.version("torch").split("+")[0]
        path = args.out / f"torch-{release}.json"
        previous = facts_of(json.loads(path.read_text()), source="shipped")
        # the operators export decomposes (the closure proof's): the others wait for a whole run
        only = sorted(op for op, into in previous.targets.items()
                      if (args.retrace_unknown and into is None and (op in previous.default or op in previous.forced))
                      or (args.retrace_forced and op in previous.forced) or op in args.retrace_ops)
    table = read_torch_table(time_budget_s=args.budget, workers=args.workers, only=only)
    text = facts_file_text(table, previous)
    facts = json.loads(text)
    untraced = sum(1 for t in facts["targets"].values() if t is None)
    if any("time budget" in why for why in facts["reasons"].values()):
        print(f"torch {table.version}: out of time before every decomposition was traced; raise --budget",
              file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"torch-{facts['version'].split('+')[0]}.json"  # the release, without a local label (+cpu)
    path.write_text(text)
    print(f"{path}: torch {facts['version']}, {len(facts['default'])} in the default table, "
          f"{len(facts['targets'])} decompositions ({untraced} untraced), {len(facts['forced'])} decomposed "
          f"whatever the table says, {len(facts['preservable'])} preservable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
