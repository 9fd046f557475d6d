"""Findings are judged against the exceptions in force when they are read (issue 10): after
`exceptions add`, `check-bc`, `report weekly` and `ops show` agree that the break is waived; when
the exception is removed or expires, all three call it an error again. On 2.12.0 → 2.13.0, which
removed 108 named-tensor overloads without deprecation."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
WAIVED = ("aten::all.dimname", "aten::unbind.Dimname")


def at(days: float) -> str:
    return (T0 + timedelta(days=days)).isoformat()


def severities(cli, day: float) -> dict[str, dict[str, str]]:
    """Each view's severity of the two findings: check-bc, report weekly, ops show."""
    bc = {f["operator"]: f["severity"] for f in cli("check-bc", "2.12.0", "2.13.0", "--format", "json",
                                                      now=at(day)).json()["findings"]}
    report = cli.ok("report", "weekly", "--format", "json", "--as-of", at(day)[:10], "--since", at(0)[:10],
                    now=at(day)).json()
    weekly = {f["operator"]: f["severity"] for f in report["compat_findings"]}
    out = {}
    for op in WAIVED:
        [shown] = [f for f in cli.ok("ops", "show", op, "--json", now=at(day)).json()["findings"] if f["kind"] == "bc"]
        out[op] = {"check-bc": bc[op], "report": weekly[op], "ops show": shown["severity"]}
        assert ("Waived by exception" in shown["message"]) is (shown["severity"] == "waived")
    return out


def test_exceptions_are_judged_when_findings_are_read(make_cli, tmp_path, pytorch_release):
    cli = make_cli(f"sqlite:///{tmp_path / 'opgov.db'}", simulation=True)
    for day, version in ((0, "2.12.0"), (1, "2.13.0")):
        folder = pytorch_release(version)
        cli.ok("import", folder / "native_functions.yaml", "--tags-yaml", folder / "tags.yaml", "--label", version,
               now=at(day))
    assert all(set(v.values()) == {"error"} for v in severities(cli, 2).values())
    report = cli.ok("report", "weekly", "--format", "json", "--as-of", at(2)[:10], "--since", at(0)[:10],
                    now=at(2)).json()
    errors_before = sum(f["severity"] == "error" for f in report["compat_findings"])

    for op in WAIVED:
        cli.ok("exceptions", "add", op, "--reason", "named tensors are retired", "--expires", at(30)[:10], now=at(3))
    assert all(set(v.values()) == {"waived"} for v in severities(cli, 4).values()), severities(cli, 4)
    report = cli.ok("report", "weekly", "--format", "json", "--as-of", at(4)[:10], "--since", at(0)[:10],
                    now=at(4)).json()
    assert sum(f["severity"] == "error" for f in report["compat_findings"]) == errors_before - 2
    # a report as of a day before the exception judges as that day did
    early = cli.ok("report", "weekly", "--format", "json", "--as-of", at(2)[:10], "--since", at(0)[:10],
                   now=at(4)).json()
    assert {f["severity"] for f in early["compat_findings"] if f["operator"] in WAIVED} == {"error"}

    # expired: errors again, everywhere
    assert all(set(v.values()) == {"error"} for v in severities(cli, 32).values())
    # removed: errors again
    cli.ok("exceptions", "remove", "1", now=at(5))
    assert severities(cli, 6)["aten::all.dimname"] == {"check-bc": "error", "report": "error", "ops show": "error"}
    assert set(severities(cli, 6)["aten::unbind.Dimname"].values()) == {"waived"}
