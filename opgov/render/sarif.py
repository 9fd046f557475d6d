"""SARIF 2.1.0 for GitHub code scanning (``opgov check-pr --sarif FILE``).

One run, the tool's rules (check-bc's and the PR gate's, with their purposes), one result per
finding with a physical location relative to the repository root (``%SRCROOT%``)."""

from __future__ import annotations

import json

from opgov import __version__
from opgov.core.prgate import PR_RULES, PrReport

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "waived": "note", "info": "note"}


def _rules() -> list[dict]:
    from opgov.core import compat

    seen: dict[str, str] = {}
    for rule in compat.RULES:
        seen.setdefault(rule.id, rule.purpose)
    for rule in PR_RULES.values():
        seen.setdefault(rule.id, rule.purpose)
    return [{"id": rid, "name": "".join(part.title() for part in rid.split("-")),
             "shortDescription": {"text": purpose}, "helpUri": "https://github.com/opgov/opgov/blob/main/docs/user-guide.md"}
            for rid, purpose in seen.items()]


def render_sarif(report: PrReport) -> str:
    rules = _rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for f in report.findings:
        result: dict = {"ruleId": f.rule, "level": _LEVEL[f.severity], "message": {"text": f.message}}
        if f.rule in index:
            result["ruleIndex"] = index[f.rule]
        if f.file:
            result["locations"] = [{"physicalLocation": {
                "artifactLocation": {"uri": f.file, "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": f.line or 1}}}]
        if f.severity == "waived":
            result["suppressions"] = [{"kind": "external", "justification": f.message}]
        props = {}
        if f.operator:
            props["operator"] = f.operator
        if f.reviewers:
            props["reviewers"] = list(f.reviewers)
        if props:
            result["properties"] = props
        results.append(result)
    log = {"$schema": SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "opgov check-pr", "version": __version__,
                            "informationUri": "https://github.com/opgov/opgov", "rules": rules}},
        "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "the repository root"}}},
        "results": results}]}
    return json.dumps(log, indent=2) + "\n"
