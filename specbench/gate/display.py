"""The gate's report as the renderers print it: `verdict(report)` → `render.verdict.Verdict`.

The headline, the failures (regressions, then missing) explained one sentence each, the
notes that explain the comparison, and every check's display strings (`gate.text`).
Markdown, HTML and the terminal table are `render.verdict`'s; the JUnit XML `gate.junit`'s.
"""

from __future__ import annotations

from specbench.gate.compare import GateReport
from specbench.gate.text import VERDICT_TEXT, brief_texts, explanation, row_texts
from specbench.render.verdict import Check, Verdict

_HEADLINE = {
    0: "✅ specbench gate: pass",
    1: "❌ specbench gate: regression",
    2: "⚠️ specbench gate: baseline cells missing from the results",
}


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


def verdict(report: GateReport) -> Verdict:
    """What the renderers print of a gate report."""
    problems = report.with_verdict("regression") + report.with_verdict("missing")
    checks = tuple(
        Check(
            tuple(row_texts(row)),
            row.verdict,
            VERDICT_TEXT[row.verdict],
            row.note,
            brief=brief_texts(row),
            cell_missing=row.cell_missing,
            rule=row.rule,
        )
        for row in report.comparisons
    )
    return Verdict(
        headline=headline(report),
        passed=report.exit_code == 0,
        failures=tuple(explanation(row) for row in problems),
        notes=tuple(report.notes),
        checks=checks,
    )
