"""JUnit XML (``opgov check-pr --junit FILE``): one test case per finding, a failure for each
error, so that CI test reporters show the gate's verdicts; one passing case when there is none."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from opgov.core.prgate import PrReport


def render_junit(report: PrReport, *, name: str = "opgov check-pr") -> str:
    failures = report.errors
    cases = report.findings
    suites = ET.Element("testsuites", name=name, tests=str(max(len(cases), 1)), failures=str(failures), errors="0")
    suite = ET.SubElement(suites, "testsuite", name=name, tests=str(max(len(cases), 1)), failures=str(failures),
                          errors="0", skipped="0")
    if not cases:
        ET.SubElement(suite, "testcase", classname="opgov.check-pr", name="no findings")
    for f in cases:
        where = f"{f.file}:{f.line}" if f.file and f.line else (f.file or "")
        attrs = {"classname": f"opgov.{f.rule}", "name": f"{f.operator or where} [{f.rule}]"}
        if f.file:
            attrs["file"] = f.file
        if f.line:
            attrs["line"] = str(f.line)
        case = ET.SubElement(suite, "testcase", **attrs)
        if f.severity == "error":
            failure = ET.SubElement(case, "failure", message=f.message, type=f.rule)
            failure.text = f"{where}: {f.message}"
        else:
            out = ET.SubElement(case, "system-out")
            out.text = f"{f.severity}: {where}: {f.message}"
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
