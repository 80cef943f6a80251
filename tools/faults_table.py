"""docs/faults.md's table of fault cases, from the JUnit XML of `pytest -m faults`.

Each fault case (tests/e2e/faults/) records its id, kind, name, what is expected, what it
observed and the test that injects the same fault as properties of its testcase; a failed
check whose message starts `DATA LOSS:` marks a data-loss case. This writes one row per
case (F01…, then I01…) and the totals: faults survived, bad inputs with a clean error,
data-loss cases. A skipped case (no tmpfs without root) is counted as skipped, never passed.

    pytest -m faults --junitxml=faults.xml
    python tools/faults_table.py faults.xml                       # the table on stdout
    python tools/faults_table.py faults.xml --doc docs/faults.md  # between its markers

Exit 0 when every case that ran passed, 1 otherwise, 2 for a file it cannot read.
"""

from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

BEGIN = "<!-- faults table: tools/faults_table.py writes what follows -->"
END = "<!-- end of the faults table -->"
DATA_LOSS = "DATA LOSS: "


@dataclass(frozen=True)
class Row:
    """One fault case as pytest reported it: `status` is pass, fail or skip."""

    id: str
    kind: str
    name: str
    expected: str
    observed: str
    tests: str
    status: str
    problem: str
    seconds: float

    @property
    def data_loss(self) -> bool:
        return self.problem.startswith(DATA_LOSS)


def read_rows(path: Path) -> list[Row]:
    """The fault cases of a JUnit XML file, ordered F01…, then I01…."""
    rows = []
    for testcase in ET.parse(path).getroot().iter("testcase"):
        properties = {p.get("name"): p.get("value") or "" for p in testcase.iter("property")}
        if "case_id" not in properties:
            continue  # not a fault case
        status, problem = "pass", ""
        for child in testcase:
            if child.tag in ("failure", "error") and status != "fail":
                status, problem = "fail", _first_line(child.get("message") or child.tag)
            elif child.tag == "skipped" and status == "pass":
                status, problem = "skip", child.get("message") or "skipped"
        rows.append(
            Row(
                id=properties["case_id"],
                kind=properties.get("kind", ""),
                name=properties.get("name", ""),
                expected=properties.get("expected", ""),
                observed=properties.get("observed", ""),
                tests=properties.get("tests", ""),
                status=status,
                problem=problem,
                seconds=float(testcase.get("time") or 0),
            )
        )
    return sorted(rows, key=lambda r: (r.id[0] != "F", int(re.sub(r"\D", "", r.id) or 0)))


def _first_line(message: str) -> str:
    line = message.strip().splitlines()[0] if message.strip() else message
    return line.removeprefix("AssertionError: ")


def totals(rows: list[Row]) -> dict[str, dict[str, int] | int]:
    def count(kind: str) -> dict[str, int]:
        mine = [r for r in rows if r.kind == kind]
        return {
            "passed": sum(r.status == "pass" for r in mine),
            "run": sum(r.status != "skip" for r in mine),
            "skipped": sum(r.status == "skip" for r in mine),
        }

    return {
        "faults": count("fault"),
        "inputs": count("input"),
        "data_loss_cases": sum(r.data_loss for r in rows),
    }


def markdown(rows: list[Row]) -> str:
    """The table, then the three totals."""
    lines = [
        "| # | case | expected | observed | result | test that injects it |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r.status == "skip":
            observed = r.problem
        else:
            observed = r.observed + (f" — {r.problem}" if r.problem else "")
        verdict = r.status + (" (DATA LOSS)" if r.data_loss else "")
        cells = (r.id, r.name, r.expected, observed, verdict, r.tests or "—")
        lines.append(
            "| " + " | ".join(c.replace("|", "/").replace("\n", " ") for c in cells) + " |"
        )
    summary = totals(rows)
    faults, inputs = summary["faults"], summary["inputs"]
    assert isinstance(faults, dict) and isinstance(inputs, dict)
    lines += [
        "",
        f"Faults survived: {faults['passed']}/{faults['run']}" + _skipped(faults),
        f"Bad inputs with a clean error: {inputs['passed']}/{inputs['run']}" + _skipped(inputs),
        f"Data-loss cases: {summary['data_loss_cases']}",
    ]
    return "\n".join(lines)


def _skipped(count: dict[str, int]) -> str:
    return f" ({count['skipped']} skipped)" if count["skipped"] else ""


def replace_table(document: str, table: str) -> str:
    """`document` with the text between its two markers replaced by `table`."""
    start, end = document.find(BEGIN), document.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the markers {BEGIN!r} and {END!r} are not there, in that order")
    return document[: start + len(BEGIN)] + "\n" + table + "\n" + document[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("junit_xml", type=Path, help="from pytest -m faults --junitxml=FILE")
    parser.add_argument("--doc", type=Path, help="write the table between this file's markers")
    args = parser.parse_args(argv)
    try:
        rows = read_rows(args.junit_xml)
    except (OSError, ET.ParseError) as error:
        print(f"error: {args.junit_xml}: {error}", file=sys.stderr)
        return 2
    if not rows:
        print(f"error: {args.junit_xml}: no fault case (from `pytest -m faults`)", file=sys.stderr)
        return 2
    table = markdown(rows)
    if args.doc:
        try:
            args.doc.write_text(replace_table(args.doc.read_text(), table))
        except (OSError, ValueError) as error:
            print(f"error: {args.doc}: {error}", file=sys.stderr)
            return 2
    if not args.doc:
        print(table)
    return 1 if any(r.status == "fail" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
