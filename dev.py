#!/usr/bin/env python3
"""Set up and run opgov from a fresh checkout with nothing but Python 3.11+.

    python3 dev.py demo    # create .venv, install opgov, run the demo on a local SQLite database
    python3 dev.py test    # create .venv, install opgov, its test tools and torch, run the whole test suite
    python3 dev.py setup   # only create/refresh .venv

``demo --work DIR`` runs the demo in DIR instead of ``.demo/`` (a new or empty folder, or one an
earlier demo wrote: it is emptied first). Its second
half reads the real PyTorch 2.13.0 registry and 43 real models: from ``OPGOV_SHARED_DIR``, else
``../shared`` beside the checkout, else the copies that ship in ``tests/data``.

``test`` runs pytest on one worker per core (pytest-xdist, a test file per worker, the longest files
first; docs/performance.md says how long it takes); extra arguments go to pytest
(``python3 dev.py test -k governance``, ``-n 0`` for one process). It leaves out the few tests
marked ``ci`` (fuzzing, a wheel build, servers killed mid-request: CI's run, .ci/run, has them);
``test --all`` runs them too. It installs torch (the tests' oracle; opgov never needs it) when pip can.
``OPGOV_DEV_NO_INSTALL=1`` runs the opgov the running Python already has and installs nothing.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
SAMPLE = ROOT / "data" / "sample"
BUNDLED = ROOT / "tests" / "data"  # copies of the real data, with their licences (tests/data/README.md)
TORCH = "torch==2.13.0"  # the tests' oracle (a CPU build); opgov itself never imports torch
# what torch's own test helpers need: `decomps import-torch` exports each operator on their OpInfo samples
TORCH_HELPERS = ["numpy", "expecttest"]
OPGOV = [str(BIN / "opgov")]  # the command the demo runs (see setup)


def python_env() -> dict[str, str]:
    """The environment of what dev.py runs: Python's bytecode cached in ``.venv/pycache``, outside
    the checkout (``PYTHONPYCACHEPREFIX``, unless one is set), and written there even where
    ``PYTHONDONTWRITEBYTECODE`` is set: otherwise each of the suite's hundreds of processes (the CLI,
    servers, torch's tracers) compiles opgov, and torch's modules, again (0.7 s → 0.45 s a command)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.setdefault("PYTHONPYCACHEPREFIX", str(VENV / "pycache"))
    return env


def setup(extras: str = "test") -> None:
    """Create .venv and install opgov (editable) with ``extras``; skip when nothing changed.
    ``OPGOV_DEV_NO_INSTALL=1``: install nothing, run the opgov this Python already has (the test
    that runs the demo uses it, so the demo never reinstalls the environment it runs in)."""
    global OPGOV
    if os.environ.get("OPGOV_DEV_NO_INSTALL") == "1":
        OPGOV = [sys.executable, "-m", "opgov"]
        return
    if sys.version_info < (3, 11):
        sys.exit(f"opgov needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    if not PY.exists():
        print(f"creating {VENV.relative_to(ROOT)}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    stamp = VENV / ".opgov-installed"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    print("installing opgov and its dependencies into .venv", flush=True)
    subprocess.run([str(PY), "-m", "pip", "install", "-qq", "--upgrade", "pip"], check=True)
    subprocess.run([str(PY), "-m", "pip", "install", "-qq", "-e", f"{ROOT}[{extras}]"], check=True)
    if extras == "test" and subprocess.run([str(PY), "-c", "import torch, numpy, expecttest"],
                                           capture_output=True).returncode:
        print(f"installing {TORCH} into .venv (the tests' oracle for BC/FC verdicts and torch.export)", flush=True)
        # (not compiled here: the tests import torch with the bytecode cache of python_env)
        if subprocess.run([str(PY), "-m", "pip", "install", "-qq", "--no-compile", TORCH, *TORCH_HELPERS]).returncode:
            print(f"could not install {TORCH}: the tests that ask torch will skip", flush=True)
    stamp.write_text(digest)


def real_data() -> Path | None:
    """The folder holding the real data (``pytorch/2.13.0`` and ``models``): ``OPGOV_SHARED_DIR``,
    else ``../shared`` beside the checkout, else the copies in ``tests/data``; None when none has them."""
    given = os.environ.get("OPGOV_SHARED_DIR")
    for folder in ([Path(given)] if given else []) + [ROOT.parent / "shared", BUNDLED]:
        if (folder / "models" / "torchvision_ops.json").is_file() and \
                (folder / "pytorch" / "2.13.0" / "native_functions.yaml").is_file():
            return folder
    return None


def opgov(*args: str, expect: int | None = 0, db: str, says: str = "", expected: str = "") -> None:
    """Run one demo step: ``says`` what it shows (printed before it, as a comment), and, when the
    step is a deliberate refusal, ``expected`` says why (printed after it)."""
    shown = " ".join(shlex.quote(a) if " " in a else a for a in args)
    if says:
        print(f"\n# {says}", flush=True)
    print(f"{'' if says else chr(10)}$ opgov {shown}", flush=True)
    env = {**python_env(), "OPGOV_DATABASE_URL": db, "COLUMNS": os.environ.get("COLUMNS", "120")}
    result = subprocess.run([*OPGOV, *args], env=env)
    if expect is not None and result.returncode != expect:
        sys.exit(f"demo step failed (exit {result.returncode}, expected {expect}): opgov {shown}")
    if expected:
        print(f"# (expected: exit {result.returncode}, {expected})", flush=True)


def demo(args: list[str]) -> None:
    """Import the sample registry into a fresh SQLite database and walk one governance week; then
    the real PyTorch 2.13.0 registry and 43 real models in a second database."""
    work = ROOT / ".demo"
    if args[:1] == ["--work"] and len(args) == 2:
        work = Path(args[1]).resolve()
        # the demo empties its folder: only a new or empty one, or one an earlier demo wrote
        if work.is_dir() and any(work.iterdir()) and not (work / "opgov.db").is_file():
            sys.exit(f"dev.py demo --work {args[1]}: the folder is not empty and holds no earlier demo; "
                     "give a new or empty folder")
        if work.exists() and not work.is_dir():
            sys.exit(f"dev.py demo --work {args[1]}: not a folder")
    elif args:
        sys.exit("usage: python3 dev.py demo [--work DIR]")
    setup()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    db = f"sqlite:///{work / 'opgov.db'}"
    v1, v2, tags = SAMPLE / "native_functions.v1.yaml", SAMPLE / "native_functions.v2.yaml", SAMPLE / "tags.yaml"
    day = lambda d: f"2026-01-{d:02d}T09:00:00+00:00"  # noqa: E731 - the demo's simulated calendar

    print(f"opgov demo: a simulation database (a claimed --now is honoured) in {shown(work / 'opgov.db')}")
    opgov("db", "upgrade", "--simulation", db=db,
          says="A simulation database: each step claims its day with --now, so one week runs in seconds.")
    opgov("--now", day(5), "import", str(v1), "--tags-yaml", str(tags), "--label", "v1", db=db,
          says="The first snapshot of the sample registry (~210 entries): every operator, its schema and tags.")
    opgov("--now", day(5), "members", "add", "alice", "--role", "maintainer", db=db,
          says="The committee: the first member is a maintainer; from now on roles decide who may do what.")
    for name, role in (("bob", "maintainer"), ("carol", "maintainer"), ("dave", "developer"), ("syncbot", "bot")):
        opgov("--now", day(5), "--actor", "alice", "members", "add", name, "--role", role, db=db)
    opgov("--now", day(5), "--actor", "alice", "decisions", "load", "core-aten-review-2023", db=db,
          says="The 2023 core ATen review's decisions, shipped with opgov. It warns of rules that end in "
               "operators with no decision yet: the next step gives them rules.")
    opgov("--now", day(5), "--actor", "alice", "decomps", "load", str(SAMPLE / "rules.yaml"), db=db,
          says="Rules for the two operators the warning names (softplus, arange), written for the sample "
               "registry (for PyTorch's own: `opgov decomps load export-composites`).")
    opgov("--now", day(5), "check-decomps", db=db,
          says="Every rule now reaches only core operators: the warning is resolved (what remains are "
               "warnings about the sample's tags).")
    opgov("--now", day(12), "--actor", "syncbot", "import", str(v2), "--tags-yaml", str(tags), "--label", "v2", db=db,
          says="A week later the sync bot imports the next snapshot: operators added, removed, changed.")
    opgov("check-bc", "v1", "v2", expect=1, db=db,
          says="PyTorch's BC/FC verdicts between the two snapshots, with the core policy applied.",
          expected="the snapshots break core operators; a CI job would stop here")
    opgov("--now", day(13), "--actor", "dave", "propose-core", "aten::fused_rms_norm",
          "--rationale", "RMSNorm is in every recent LLM and has no exact cheap decomposition", db=db,
          says="A developer proposes a new operator for the core opset.")
    opgov("--now", day(13), "--actor", "bob", "review", "1", "--approve", "--comment", "agreed", db=db,
          says="Two maintainers approve it (the quorum is 2): the second vote decides it.")
    opgov("--now", day(14), "--actor", "carol", "review", "1", "--approve", "--comment", "yes, keep it whole", db=db)
    opgov("--now", day(14), "--actor", "alice", "deprecate", "aten::glu", "--reason",
          "rarely used; the decomposition covers it", db=db,
          says="A maintainer starts deprecating an operator: a 14-day timer before it may become deprecated.")
    opgov("--now", day(15), "--actor", "alice", "mark-deprecated", "aten::glu", expect=1, db=db,
          says="One day later it is too early to mark it deprecated: the timer refuses.",
          expected="a deliberate refusal: the 14 days have not passed")
    opgov("--now", day(15), "ops", "show", "aten::fused_rms_norm", db=db,
          says="The operator the committee made core: its category, the decision and its rationale.")
    working_copy = work / "native_functions.yaml"
    shutil.copyfile(v2, working_copy)
    shutil.copyfile(tags, work / "tags.yaml")
    opgov("--now", day(15), "sync-yaml", str(working_copy), "--tags-yaml", str(work / "tags.yaml"), "--diff", db=db,
          says="The sync bot's change to native_functions.yaml: the new core tag and the deprecation, nothing else.")
    opgov("--now", day(15), "tick", "--within", "30", db=db,
          says="The lifecycle timers coming due within 30 days.")
    shared = real_data()
    if shared is not None:  # real models exported with torch.export, and PyTorch's own registry
        models, release = shared / "models", shared / "pytorch" / "2.13.0"
        opgov("--now", day(15), "check-model", f"{models / 'torchvision_ops.json'}#mobilenet_v3_small@core-aten",
              "--runtime", "v1", db=db,
              says="A real model (exported with torch.export) checked against the v1 snapshot.")
        print(f"\nThe real PyTorch 2.13.0 registry in a second database (the data from {shown(shared)}): the "
              "operators a backend implements for the core ATen decompositions, and which of 43 real models "
              "that covers")
        real = f"sqlite:///{work / 'pytorch-2.13.0.db'}"
        opgov("db", "upgrade", db=real)
        opgov("import", str(release / "native_functions.yaml"), "--tags-yaml", str(release / "tags.yaml"),
              "--label", "2.13.0", db=real)
        opgov("decomps", "load", "export-composites", db=real)
        opgov("opset", "build", "--preset", "core-aten", "--models", str(models), db=real,
              says="The opset a backend implements for the core ATen decompositions, and the models it runs.")
    else:
        print(f"\n# Skipped: the real-data half (PyTorch 2.13.0's registry and 43 real models) needs "
              f"pytorch/2.13.0/native_functions.yaml and models/torchvision_ops.json in OPGOV_SHARED_DIR, "
              f"../shared or {shown(BUNDLED)}; the sample's week above is complete without them.")
    opgov("--now", day(15), "report", "weekly", "--format", "html", "--out", str(work / "report.html"), db=db,
          says="The weekly report as one self-contained web page.")
    opgov("--now", day(15), "report", "weekly", db=db,
          says="And as Markdown, to post: the week's decisions, findings and timers.")
    print(f"\nThe weekly report as a web page: {shown(work / 'report.html')}")


def shown(path: Path) -> str:
    """A path as the reader typed it: relative to the checkout when it is inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def test(args: list[str]) -> int:
    """pytest, on one worker per core unless the arguments choose (``-n``, ``--dist``, ``-p no:xdist``).
    A worker takes a whole test file (``--dist loadfile``): a module's server and databases are
    set up once, by the worker that runs its tests. The files are handed out in the order the suite
    gives them, the longest first (tests/conftest.longest_first), not xdist's (most tests first).
    ``--all`` runs the tests marked ``ci`` too (``OPGOV_TEST_ALL=1``, as .ci/run does)."""
    setup()
    if "--all" in args:
        args = [a for a in args if a != "--all"]
        os.environ["OPGOV_TEST_ALL"] = "1"
    chosen = any(a in ("-n", "--numprocesses", "--dist", "no:xdist") or a.startswith(("-n", "--numprocesses=", "--dist="))
                 for a in args)
    parallel = [] if chosen else ["-n", "auto", "--dist", "loadfile", "--no-loadscope-reorder"]
    return subprocess.run([str(PY), "-m", "pytest", *parallel, *args], cwd=ROOT, env=python_env()).returncode


def main() -> None:
    command, rest = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    if command == "demo":
        demo(rest)
    elif command == "test":
        sys.exit(test(rest))
    elif command == "setup":
        setup()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
