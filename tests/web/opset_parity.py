"""The build-your-own-opset page shows what `opgov opset build` computes: the worlds the cases of
``tests/web/opset_cases/`` are computed in, one choice's result by Python (what ``opset build``
prints), what the page shows for it (:func:`shown`, read from the page in Chromium) and what it
must show for that result (:func:`expected_shown`).

Two worlds, from real data: ``rules`` (PyTorch 2.13.0's registry, the 2023 review's decisions,
opgov's rules file; its snapshot labelled with no release, so no torch facts) and ``torch`` (the
same, labelled 2.13.0, plus the facts ``opgov decomps import-torch`` traced from the installed
torch 2.13). ``scripts/build_opset_cases.py`` writes the expectations with
:func:`python_result`; ``tests/web/test_opset_cases.py`` checks them against Python and the page.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
CASES = HERE / "opset_cases"
_GIVEN = Path(os.environ.get("OPGOV_SHARED_DIR", Path(__file__).resolve().parents[3] / "shared"))
SHARED = _GIVEN if _GIVEN.is_dir() else HERE.parent / "data"  # as tests/conftest.py: else the copies in tests/data
WORLDS = ("rules", "torch")


def _opgov(db: str, *args: str) -> None:
    """A set-up step, in this process (it is not about the process)."""
    from tests.conftest import opgov_in_process

    done = opgov_in_process(["--db", db, "--actor", "setup", *args], env={**os.environ, "OPGOV_SERVER": ""})
    if done.returncode != 0:
        raise RuntimeError(f"opgov {' '.join(args)}: {done.stderr}")


def make_world(world: str, folder: Path, shared: Path) -> str:
    """A database of ``world`` in ``folder``; its URL. The torch world records the installed torch's
    facts with ``decomps import-torch`` (the shipped ones, for a release opgov ships facts for)."""
    db = f"sqlite:///{folder / f'{world}.db'}"
    release = shared / "pytorch" / "2.13.0"
    _opgov(db, "db", "upgrade", "--simulation")
    # the rules world's snapshot is labelled with no release, so no shipped torch facts stand for it:
    # opgov's rules alone
    _opgov(db, "import", str(release / "native_functions.yaml"), "--tags-yaml", str(release / "tags.yaml"),
           "--label", "2.13.0" if world == "torch" else "main")
    _opgov(db, "decisions", "load", "core-aten-review-2023")  # the shipped decisions of the 2023 review
    _opgov(db, "decomps", "load", "export-composites")
    if world == "torch":
        _opgov(db, "decomps", "import-torch", "--budget", "1200")  # a bound, on a busy machine too
    return db


def torch_version(db: str) -> str | None:
    """The torch release whose facts the database holds (the torch world), or None."""
    from opgov.reads.torch import torch_facts

    return _in_ctx(db, lambda ctx: (facts := torch_facts(ctx.session)) and facts.version)


def page_data(db: str, models: Path) -> str:
    """The page's embedded data (``opset-data``) for this database and corpus, as JSON text."""
    return _in_ctx(db, lambda ctx: _page_data(ctx, models))


def _page_data(ctx, models: Path) -> str:
    from opgov.results.plain import to_json
    from opgov.services.pages import opset_data

    return to_json(opset_data(ctx, models=str(models)), indent=None)


def python_result(db: str, choice: dict, models: Path) -> dict:
    """What `opgov opset build` gives for ``choice`` (its JSON, python and selective-build outputs);
    ``{"error": message}`` when it refuses."""
    return _in_ctx(db, lambda ctx: _python_result(ctx, choice, models))


def _python_result(ctx, choice: dict, models: Path) -> dict:
    from opgov.core.errors import BadInput, PolicyRefusal
    from opgov.render.decomps_text import render_python, render_selective_build
    from opgov.reads.registry import out_variants
    from opgov.services.decomps import build

    try:
        opset, cov = build(ctx, preset=choice["preset"], decompose=list(choice["decompose"]),
                           keep=list(choice["keep"]), models=str(models))
    except (BadInput, PolicyRefusal) as e:
        return {"error": e.message}
    return {
        "operators": [[e.op, e.why, list(e.produced_by), e.category, e.lifecycle] for e in opset.entries],
        "without_rule": list(opset.without_rule), "decomposed": list(opset.decomposed), "notes": list(opset.notes),
        "graph_ops": list(opset.graph_ops),
        "coverage": {"covered": cov.covered, "missing": [[m.model, list(m.missing)] for m in cov.models],
                     "suggestions": [[s.op, list(s.newly_covered), s.needed_by, s.covered_after]
                                     for s in cov.suggestions],
                     "not_in_registry": list(cov.not_in_registry)},
        "python": render_python(opset),
        "yaml": render_selective_build(opset, out_variants=out_variants(ctx, opset.operators)),
    }


def summary(result: dict) -> dict:
    """What a case file records of a result: the operators, notes, coverage and code in full; the
    long lists only the page's counts show (without_rule, decomposed) and the selective-build
    YAML (written from the operators) by count and SHA-256, to keep the files small."""
    if "error" in result:
        return result

    def digest(value) -> dict:
        text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
        return {"count": value.count("\n") if isinstance(value, str) else len(value),
                "sha256": hashlib.sha256(text.encode()).hexdigest()}

    return {"count": len(result["operators"]), "operators": result["operators"], "notes": result["notes"],
            "graph_ops": result["graph_ops"], "coverage": result["coverage"], "python": result["python"],
            "without_rule": digest(result["without_rule"]), "decomposed": digest(result["decomposed"]),
            "yaml": digest(result["yaml"])}


def dump_case(case: dict) -> str:
    """A case as JSON text, one operator to a line (readable diffs, small files)."""
    expected = case["expected"]
    head = {k: v for k, v in case.items() if k != "expected"}
    if "operators" not in expected:
        return json.dumps({**head, "expected": expected}, indent=1, ensure_ascii=False) + "\n"
    rest = {k: v for k, v in expected.items() if k != "operators"}
    lines = [json.dumps(row, ensure_ascii=False, separators=(",", ":")) for row in expected["operators"]]
    body = json.dumps({**head, "expected": {**rest, "operators": "@OPERATORS@"}}, indent=1, ensure_ascii=False)
    return body.replace('"@OPERATORS@"', "[\n" + ",\n".join(lines) + "\n  ]") + "\n"


def _in_ctx(db: str, work):
    from opgov.core.clock import SystemClock
    from opgov.db.engine import make_engine, transaction
    from opgov.reads.common import Ctx

    engine = make_engine(db)
    try:
        with transaction(engine) as session:
            return work(Ctx(session=session, actor="test", clock=SystemClock()))
    finally:
        engine.dispose()


def cases(world: str | None = None) -> list[Path]:
    return sorted(p for p in CASES.glob("*.json") if world is None or json.loads(p.read_text())["world"] == world)


def address(choice: dict) -> str:
    """The page's address fragment for ``choice``."""
    return "#" + urlencode([("preset", choice["preset"])] + [("decompose", op) for op in choice["decompose"]]
                           + [("keep", op) for op in choice["keep"]])


def expected_shown(result: dict) -> dict:
    """What the page must show for :func:`python_result`'s ``result``: its refusal, or the operators
    (a produced operator's row says by what: the first three, … for more), the notes, the models,
    the suggestions, the code and the yaml."""
    if "error" in result:
        return {"error": result["error"]}

    def why(reason: str, by: list[str]) -> str:
        return reason + (f" ← {', '.join(by[:3])}{' …' if len(by) > 3 else ''}" if by else "")

    cov = result["coverage"]
    return {"count": len(result["operators"]),
            "rows": [[op, category or "—", lifecycle, why(reason, by)] for op, reason, by, category, lifecycle
                     in result["operators"]],
            "notes": result["notes"], "covered": cov["covered"],
            "models": [[model, ", ".join(missing) or "covered"] for model, missing in cov["missing"]],
            "suggestions": [s[0] for s in cov["suggestions"]], "python": result["python"], "yaml": result["yaml"]}


#: What the page shows, read in one script call (a page with a refusal shows only it).
SHOWN = """
const byId = (id) => document.getElementById(id);
if (!byId('choice-error').hidden) return {error: byId('choice-error').textContent};
const cells = (selector) => Array.from(document.querySelectorAll(selector))
    .map((row) => Array.from(row.cells).map((cell) => cell.textContent));
return {count: Number(byId('op-count').textContent), rows: cells('#implement tbody tr'),
        notes: Array.from(document.querySelectorAll('#notes li')).map((li) => li.textContent),
        covered: Number(byId('model-count').textContent),
        models: cells('#models tbody tr').map(([model, , missing]) => [model, missing]),
        suggestions: Array.from(document.querySelectorAll('#suggestions li code')).map((c) => c.textContent),
        python: byId('python-code').textContent, yaml: byId('selective-build').textContent};
"""


def shown(driver, page: str, choice: dict) -> dict:
    """Open ``page`` with ``choice`` in its address (a fresh load) and read what it shows."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    driver.get(page + address(choice))
    WebDriverWait(driver, 60).until(lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    return driver.execute_script(SHOWN)
