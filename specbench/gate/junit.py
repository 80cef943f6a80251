"""JUnit XML of a gate report: one test case per cell × metric, so CI shows it natively.

Regressions are `<failure>`s, missing cells or metrics `<error>`s, new cells `<skipped>`;
every other verdict passes. The class name is the cell, the test name the metric.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from specbench import store
from specbench.gate.compare import GateReport
from specbench.gate.text import explanation


def junit_xml(report: GateReport) -> bytes:
    """The report as a JUnit `<testsuites>` document (UTF-8, with declaration)."""
    rows = report.comparisons
    counts = {
        "tests": str(len(rows)),
        "failures": str(len(report.with_verdict("regression"))),
        "errors": str(len(report.with_verdict("missing"))),
        "skipped": str(len(report.with_verdict("new"))),
    }
    root = ET.Element("testsuites", {"name": "specbench gate", **counts})
    suite = ET.SubElement(
        root, "testsuite", {"name": f"specbench gate: {report.suite_name or 'results'}", **counts}
    )
    if report.notes:
        properties = ET.SubElement(suite, "properties")
        for index, note in enumerate(report.notes):
            ET.SubElement(properties, "property", {"name": f"note{index + 1}", "value": note})
    for row in rows:
        case = ET.SubElement(suite, "testcase", {"classname": row.cell, "name": row.metric})
        message = explanation(row)
        if row.verdict == "regression":
            ET.SubElement(
                case, "failure", {"message": message, "type": "regression"}
            ).text = message
        elif row.verdict == "missing":
            ET.SubElement(case, "error", {"message": message, "type": "missing"}).text = message
        elif row.verdict == "new":
            ET.SubElement(case, "skipped", {"message": message})
        else:
            ET.SubElement(case, "system-out").text = message
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write_junit(report: GateReport, path: Path) -> None:
    store.write_atomic(Path(path), junit_xml(report))
