"""Render docs/user-guide.md from docs/source/user-guide.md.in by running every example for real.

    .venv/bin/python scripts/build_user_guide.py            # rewrites docs/user-guide.md

Needs ../shared (the real registries and model corpora) and torch for a few examples; writes
its scratch databases under /tmp/opgov-guide. Fails when an example exits other than expected.

In the template, inside fenced blocks, lines starting with ``@@`` are commands:

    @@ opgov ops list --category core        #@ head=5 tail=2 rc=0
    @@cd /tmp/opgov-guide/pytorch             (shown as `$ cd …`, changes the cwd)
    @@export NAME=VALUE                       (shown as `$ export …`, changes the env)
    @@! shell command                         (run, not shown)

Directives after ``#@``: head=N, tail=N, lines=a-b,c-d, grep=REGEX, rc=N (expected exit code,
default 0), noout (show the command only), wide=N (COLUMNS for this command).
Every command runs with bash in the current cwd/env; `opgov` is .venv/bin/opgov.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = REPO / ".venv" / "bin"


def abridge(lines: list[str], opts: dict[str, str]) -> list[str]:
    keep: list[int]
    n = len(lines)
    if "grep" in opts:
        rx = re.compile(opts["grep"])
        keep = [i for i, l in enumerate(lines) if rx.search(l)]
    elif "lines" in opts:
        keep = []
        for part in opts["lines"].split(","):
            a, _, b = part.partition("-")
            a_i = int(a) - 1 if a else 0
            b_i = (n + int(b[1:]) if b.startswith("~") else int(b)) if b else n
            keep.extend(range(a_i, min(b_i, n)))
    else:
        head = int(opts.get("head", n))
        tail = int(opts.get("tail", 0))
        if "head" not in opts and "tail" in opts:
            head = 0
        if head + tail >= n:
            return lines
        keep = list(range(head)) + list(range(n - tail, n))
    out: list[str] = []
    last = -1
    for i in sorted(set(keep)):
        if i != last + 1:
            out.append("…")
        out.append(lines[i])
        last = i
    if last != n - 1:
        out.append("…")
    return out


def main(template: Path, target: Path) -> int:
    env = dict(os.environ)
    for key in ("OPGOV_DATABASE_URL", "OPGOV_ACTOR", "OPGOV_NOW"):
        env.pop(key, None)
    env["PATH"] = f"{BIN}:{env['PATH']}"
    env["COLUMNS"] = "100"
    env["OPGOV_FORCE_TTY"] = "1"  # tables as a terminal shows them (a pipe gets tab-separated columns)
    env["TERM"] = "dumb"
    env["NO_COLOR"] = "1"
    env["XDG_DATA_HOME"] = "/tmp/opgov-guide/xdg"  # never touch this machine's default database
    cwd = REPO
    out_lines: list[str] = []
    failures = 0
    for raw in template.read_text().splitlines():
        if not raw.startswith("@@"):
            out_lines.append(raw)
            continue
        body = raw[2:]
        opts: dict[str, str] = {}
        if "#@" in body:
            body, _, directive = body.partition("#@")
            for item in directive.split():
                k, _, v = item.partition("=")
                opts[k] = v
        body = body.strip()
        if body.startswith("cd "):
            cwd = Path(os.path.expandvars(body[3:].strip()))
            out_lines.append(f"$ {body}")
            continue
        if body.startswith("export "):
            name, _, value = body[7:].strip().partition("=")
            env[name] = os.path.expandvars(shlex.split(value)[0] if value else "")
            out_lines.append(f"$ {body}")
            continue
        hidden = body.startswith("!")
        cmd = body[1:].strip() if hidden else body.strip()
        run_env = dict(env)
        if "wide" in opts:
            run_env["COLUMNS"] = opts["wide"]
        if "|" in cmd or ">" in cmd:  # a pipe or a file gets what a pipe or a file gets
            run_env.pop("OPGOV_FORCE_TTY", None)
        proc = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=run_env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        expected = int(opts.get("rc", "0"))
        if proc.returncode != expected:
            failures += 1
            sys.stderr.write(f"UNEXPECTED exit {proc.returncode} (expected {expected}): {cmd}\n{proc.stdout}\n")
        if hidden:
            continue
        out_lines.append(f"$ {cmd}")
        if "noout" in opts:
            continue
        lines = [l.rstrip() for l in proc.stdout.splitlines()]
        while lines and not lines[-1]:
            lines.pop()
        out_lines.extend(abridge(lines, opts))
    target.write_text("\n".join(out_lines) + "\n")
    print(f"wrote {target}; {failures} unexpected exit code(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    args = sys.argv[1:] or [str(REPO / "docs" / "source" / "user-guide.md.in"), str(REPO / "docs" / "user-guide.md")]
    sys.exit(main(Path(args[0]), Path(args[1])))
