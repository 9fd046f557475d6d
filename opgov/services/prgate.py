"""``opgov check-pr``: resolve the PR's two sides (git or files), read the repository's policy,
and run the PR gate (:mod:`opgov.core.prgate`). Needs no database; with one, its decisions,
lifecycle states, exceptions and completed deletions count too."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

from opgov.core.errors import BadInput
from opgov.core.prgate import OpState, PrInput, PrReport, check_pr
from opgov.formats.policy_config import PolicyConfig, decisions_from_file
from opgov.reads.policy import DatabaseFacts


@dataclass
class Source:
    """One side: its operators, the file label findings use, and the git revision if any."""

    ops: dict[str, OpState]
    label: str
    revision: str | None


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as err:
        raise BadInput(f"cannot run git ({err})") from None


def _toplevel(cwd: Path) -> Path | None:
    done = _git(["rev-parse", "--show-toplevel"], cwd)
    return Path(done.stdout.strip()) if done.returncode == 0 else None


def _check_ref(ref: str) -> str:
    if not ref or ref.startswith("-") or any(c in ref for c in "\0\n"):
        raise BadInput(f"{ref!r} is not a git revision")
    return ref


def _default_base(cfg: PolicyConfig) -> str:
    """The merge base of HEAD with the default branch (``default_branch``, else origin's HEAD,
    else main or master)."""
    root = cfg.root
    candidates = [cfg.default_branch] if cfg.default_branch else []
    if not candidates:
        head = _git(["symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"], root)
        if head.returncode == 0 and head.stdout.strip():
            candidates.append(head.stdout.strip().removeprefix("refs/remotes/"))
        candidates += ["origin/main", "main", "origin/master", "master"]
    for branch in candidates:
        done = _git(["merge-base", "HEAD", _check_ref(branch)], root)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    if _toplevel(root) is None:
        raise BadInput(f"{root} is not in a git repository: give --base FILE (and --head FILE)")
    raise BadInput(f"no merge base of HEAD with {', '.join(candidates)}: give --base REF or FILE "
                   "(or set default_branch in .opgov.toml)")


def _show(rev: str, path: Path, cwd: Path) -> str | None:
    """The file at ``rev`` (None when it does not exist there)."""
    top = _toplevel(cwd)
    if top is None:
        raise BadInput(f"{rev}: not in a git repository (give a file instead)")
    try:
        rel = path.resolve().relative_to(top.resolve())
    except ValueError:
        raise BadInput(f"{path} is outside the git repository {top}") from None
    done = _git(["show", f"{_check_ref(rev)}:{rel.as_posix()}"], top)
    if done.returncode != 0:
        probe = _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], top)
        if probe.returncode != 0:
            raise BadInput(f"{rev}: no such file, and not a git revision")
        return None
    return done.stdout


def _ops(path_label: str, text: str | None, path: str) -> dict[str, OpState]:
    from opgov.formats.registry import read_registry

    registry = read_registry(path, text=text, buildable=False)  # as check-bc: building is torchgen's job
    return {n: OpState(op.schema, op.tags, op.line, op.composite_implicit, op.autogen_of)
            for n, op in registry.ops.items()}


def resolve_source(spec: str | None, cfg: PolicyConfig, *, default_rev: str | None) -> Source:
    """``spec``: a file, ``git:REF[:PATH]`` or a git revision; None: ``default_rev`` (a revision),
    or the working tree's registry when that is None too."""
    registry = cfg.root / cfg.registry
    if spec is None and default_rev is None:
        return Source(_ops(cfg.registry, None, str(registry)), _label(registry, cfg), None)
    if spec is not None and not spec.startswith("git:") and Path(spec).is_file():
        return Source(_ops(spec, None, spec), spec, None)
    if spec is not None and spec.startswith("git:"):
        ref, _, inside = spec[4:].partition(":")
        path = (cfg.root / inside) if inside else registry
    else:
        ref, path = (spec if spec is not None else default_rev), registry
    text = _show(ref, path, cfg.root)
    if text is None:
        raise BadInput(f"{ref}: has no {_label(path, cfg)}")
    return Source(_ops(_label(path, cfg), text, f"{ref}:{_label(path, cfg)}"), _label(path, cfg), ref)


def _label(path: Path, cfg: PolicyConfig) -> str:
    """A path as annotations want it: relative to the repository (the config's directory)."""
    try:
        return path.resolve().relative_to(cfg.root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _rules(cfg: PolicyConfig, rev: str | None) -> tuple[dict[str, tuple[str, ...]] | None, dict[str, int]]:
    """The rules file at ``rev`` (None: the working tree): ``({op: into}, {op: line})``, or
    ``(None, {})`` when there is no such file there."""
    if cfg.rules_file is None:
        return None, {}
    path = cfg.root / cfg.rules_file
    label = _label(path, cfg)
    if rev is None:
        if not path.is_file():
            raise BadInput(f"rules_file {cfg.rules_file}: no such file", file=str(cfg.path))
        from opgov.formats.files import read_bytes

        try:
            text = read_bytes(path).decode("utf-8").replace("\r\n", "\n")
        except UnicodeDecodeError as err:
            raise BadInput(f"not UTF-8 text ({err.reason} at byte {err.start})", file=str(path)) from None
    else:
        text = _show(rev, path, cfg.root)
        if text is None:
            return None, {}
    loaded = _parse_rules(text, label if rev is None else f"{rev}:{label}")
    return {r.op: r.into for r in loaded.rules}, {r.op: r.line or 1 for r in loaded.rules}


def _parse_rules(text: str, filename: str):
    from opgov.formats.rules import parse_rules_text

    return parse_rules_text(text, filename=filename)


@dataclass(frozen=True)
class PrGate:
    """What :func:`run_check_pr` answers: the check's report, and the two sides it compared."""

    report: PrReport
    base: Source
    head: Source


def run_check_pr(cfg: PolicyConfig, base: str | None, head: str | None, *, today: date,
                 facts: DatabaseFacts | None = None) -> PrGate:
    """The whole gate: both sides, the rules files, the decisions on record, then the check."""
    from opgov.services.compat import Side, raw_findings

    base_rev = _default_base(cfg) if base is None else None
    base_src = resolve_source(base, cfg, default_rev=base_rev)
    head_src = resolve_source(head, cfg, default_rev=None)
    if base_src.revision is None and head_src.revision is None and cfg.rules_file is not None:
        # two files: compare the rules file against the merge base when there is one
        rules_base_rev = _quiet_base(cfg)
    else:
        rules_base_rev = base_src.revision
    rules_head, rules_lines = _rules(cfg, head_src.revision)
    rules_base = _rules(cfg, rules_base_rev)[0] if rules_base_rev is not None else None

    decisions = list(cfg.policy.decisions)
    if cfg.decisions_file is not None:
        decisions_path = cfg.root / cfg.decisions_file
        decisions = list(decisions_from_file(decisions_path)) + decisions
    facts = facts or DatabaseFacts()
    decisions = list(facts.decisions) + decisions  # the repository's own records win over the database's
    policy = replace(cfg.policy, decisions=tuple(decisions))

    def side(src: Source) -> Side:
        return Side(label=src.label, file=src.label,
                    schemas={n: s.schema for n, s in src.ops.items() if s.schema},
                    lines={n: s.line for n, s in src.ops.items()},
                    core={n for n, s in src.ops.items() if "core" in s.tags},
                    # as check-bc's sides: an autogen: operator that gains an entry is not new
                    autogen={n: s.autogen_of for n, s in src.ops.items() if s.schema is None and s.autogen_of})

    raw = raw_findings(side(base_src), side(head_src))
    pr = PrInput(base=base_src.ops, head=head_src.ops, head_file=head_src.label, base_file=base_src.label,
                 base_is_revision=base_src.revision is not None, rules_base=rules_base, rules_head=rules_head,
                 rules_lines=rules_lines, rules_file=_label(cfg.root / cfg.rules_file, cfg) if cfg.rules_file else None,
                 lifecycle=facts.lifecycle or {}, completed_deletions=facts.deleted,
                 db_exceptions=tuple(facts.exceptions))
    return PrGate(check_pr(pr, raw, policy, today=today), base_src, head_src)


def _quiet_base(cfg: PolicyConfig) -> str | None:
    try:
        return _default_base(cfg)
    except BadInput:
        return None


