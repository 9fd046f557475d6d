#!/usr/bin/env python3
"""Set up and run opgov from a fresh checkout with nothing but Python 3.11+.

    python3 dev.py demo    # create .venv, install opgov, run the demo on a local SQLite database
    python3 dev.py test    # create .venv, install opgov and its test tools, run the whole test suite
    python3 dev.py setup   # only create/refresh .venv

Extra arguments after ``test`` go to pytest (``python3 dev.py test -k governance``).
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
SHARED = Path(os.environ.get("OPGOV_SHARED_DIR", ROOT.parent / "shared"))


def setup(extras: str = "test") -> None:
    """Create .venv and install opgov (editable) with ``extras``; skip when nothing changed."""
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
    stamp.write_text(digest)


def opgov(*args: str, expect: int | None = 0, db: str) -> None:
    shown = " ".join(shlex.quote(a) if " " in a else a for a in args)
    print(f"\n$ opgov {shown}", flush=True)
    env = {**os.environ, "OPGOV_DATABASE_URL": db, "COLUMNS": os.environ.get("COLUMNS", "120")}
    result = subprocess.run([str(BIN / "opgov"), *args], env=env)
    if expect is not None and result.returncode != expect:
        sys.exit(f"demo step failed (exit {result.returncode}, expected {expect}): opgov {shown}")


def demo() -> None:
    """Import the sample registry into a fresh SQLite database and walk one governance week."""
    setup()
    work = ROOT / ".demo"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    db = f"sqlite:///{work / 'opgov.db'}"
    v1, v2, tags = SAMPLE / "native_functions.v1.yaml", SAMPLE / "native_functions.v2.yaml", SAMPLE / "tags.yaml"
    day = lambda d: f"2026-01-{d:02d}T09:00:00+00:00"  # noqa: E731 - the demo's simulated calendar

    print("opgov demo: a simulation database (a claimed --now is honoured) in .demo/opgov.db")
    opgov("db", "upgrade", "--simulation", db=db)
    opgov("--now", day(5), "import", str(v1), "--tags-yaml", str(tags), "--label", "v1", db=db)
    opgov("--now", day(5), "members", "add", "alice", "--role", "maintainer", db=db)
    for name, role in (("bob", "maintainer"), ("carol", "maintainer"), ("dave", "developer"), ("syncbot", "bot")):
        opgov("--now", day(5), "--actor", "alice", "members", "add", name, "--role", role, db=db)
    opgov("--now", day(5), "--actor", "alice", "decisions", "load",
          str(ROOT / "data" / "decisions" / "core-aten-review-2023.yaml"), db=db)
    opgov("--now", day(12), "--actor", "syncbot", "import", str(v2), "--tags-yaml", str(tags), "--label", "v2", db=db)
    opgov("check-bc", "v1", "v2", expect=1, db=db)
    opgov("--now", day(13), "--actor", "dave", "propose-core", "aten::fused_rms_norm",
          "--rationale", "RMSNorm is in every recent LLM and has no exact cheap decomposition", db=db)
    opgov("--now", day(13), "--actor", "bob", "review", "1", "--approve", "--comment", "agreed", db=db)
    opgov("--now", day(14), "--actor", "carol", "review", "1", "--approve", "--comment", "yes, keep it whole", db=db)
    opgov("--now", day(14), "--actor", "alice", "deprecate", "aten::glu", "--reason",
          "rarely used; the decomposition covers it", db=db)
    opgov("--now", day(15), "--actor", "alice", "mark-deprecated", "aten::glu", expect=1, db=db)
    opgov("--now", day(15), "ops", "show", "aten::fused_rms_norm", db=db)
    working_copy = work / "native_functions.yaml"
    shutil.copyfile(v2, working_copy)
    shutil.copyfile(tags, work / "tags.yaml")
    opgov("--now", day(15), "sync-yaml", str(working_copy), "--tags-yaml", str(work / "tags.yaml"), "--diff", db=db)
    opgov("--now", day(15), "tick", "--within", "30", db=db)
    models = SHARED / "models"
    if (models / "torchvision_ops.json").exists():  # real models exported with torch.export
        opgov("--now", day(15), "check-model", f"{models / 'torchvision_ops.json'}#mobilenet_v3_small@core-aten",
              "--runtime", "v1", db=db)
    release = SHARED / "pytorch" / "2.13.0"
    if (models / "torchvision_ops.json").exists() and (release / "native_functions.yaml").exists():
        print("\nThe real PyTorch 2.13.0 registry in a second database: the operators a backend implements "
              "for the core ATen decompositions, and which of 43 real models that covers")
        real = f"sqlite:///{work / 'pytorch-2.13.0.db'}"
        opgov("db", "upgrade", db=real)
        opgov("import", str(release / "native_functions.yaml"), "--tags-yaml", str(release / "tags.yaml"),
              "--label", "2.13.0", db=real)
        opgov("decomps", "load", str(ROOT / "data" / "decomps" / "export-composites.yaml"), db=real)
        opgov("opset", "build", "--preset", "core-aten", "--models", str(models), db=real)
    opgov("--now", day(15), "report", "weekly", "--format", "html", "--out", str(work / "report.html"), db=db)
    opgov("--now", day(15), "report", "weekly", db=db)
    print(f"\nThe weekly report as a web page: {work / 'report.html'}")


def test(args: list[str]) -> int:
    setup()
    return subprocess.run([str(PY), "-m", "pytest", *args], cwd=ROOT).returncode


def main() -> None:
    command, rest = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    if command == "demo":
        demo()
    elif command == "test":
        sys.exit(test(rest))
    elif command == "setup":
        setup()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
