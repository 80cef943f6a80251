"""The markdown job summary of a gate report (for `--summary` or `$GITHUB_STEP_SUMMARY`).

Failures first (regressions, then missing), then the notes that explain the comparison,
then every row in a collapsed table.
"""

from __future__ import annotations

from pathlib import Path

from specbench.common.text import Align, markdown_cell, markdown_table
from specbench.gate.compare import GateReport
from specbench.gate.text import (
    VERDICT_TEXT,
    explanation,
    row_texts,
)

_HEADLINE = {
    0: "✅ specbench gate: pass",
    1: "❌ specbench gate: regression",
    2: "⚠️ specbench gate: baseline cells missing from the results",
}


#: cell, metric left; baseline, current, change right; tolerance left; detectable right;
#: decided by, verdict left.
GATE_ALIGN: tuple[Align, ...] = (
    "left",
    "left",
    "right",
    "right",
    "right",
    "left",
    "right",
    "left",
    "left",
)


def _escape(text: str) -> str:
    return markdown_cell(text)


def headline(report: GateReport) -> str:
    """`❌ specbench gate: regression (2 of 40 checks)`."""
    regressions = len(report.with_verdict("regression"))
    missing = len(report.with_verdict("missing"))
    total = len(report.comparisons)
    counts = []
    if regressions:
        counts.append(f"{regressions} regressed")
    if missing:
        counts.append(f"{missing} missing ({len(report.missing_cells)} whole cells)")
    counts.append(f"{total} checks")
    suite = f" — suite `{report.suite_name}`" if report.suite_name else ""
    return f"{_HEADLINE[report.exit_code]}{suite}: {', '.join(counts)}"


def markdown_summary(report: GateReport) -> str:
    lines = [f"### {headline(report)}", ""]
    problems = report.with_verdict("regression") + report.with_verdict("missing")
    for row in problems:
        lines.append(f"- {_escape(explanation(row))}")
    if problems:
        lines.append("")
    for note in report.notes:
        lines.append(f"> {_escape(note)}  ")
    lines += [
        "",
        "<details><summary>All checks</summary>",
        "",
    ]
    lines += markdown_table(GATE_COLUMNS, rows_of(report), align=GATE_ALIGN)
    lines += ["", "</details>", ""]
    return "\n".join(lines)


GATE_COLUMNS = (
    "cell",
    "metric",
    "baseline",
    "current",
    "change [interval]",
    "tolerance",
    "detectable",
    "decided by",
    "verdict",
)


def rows_of(report: GateReport) -> list[list[str]]:
    """Every check's display row (`GATE_COLUMNS`); failures' verdicts in bold."""
    rows = []
    for row in report.comparisons:
        verdict = VERDICT_TEXT[row.verdict]
        if row.verdict in ("regression", "missing"):
            verdict = f"**{verdict}**"
        rows.append([*row_texts(row), verdict])
    return rows


def write_summary(report: GateReport, path: Path, *, append: bool) -> None:
    """Write (or append, as GitHub's step summary expects) the markdown summary."""
    text = markdown_summary(report)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
