"""The gate's verdict as an HTML page (`gate --html FILE`), which `report --gate` embeds.

The same content as the markdown summary (`gate.markdown`): the headline, failures first,
the notes, then every check in a real table (collapsed), from the same display strings. The
page is self-contained, as report.html is (`render.html.page`).
"""

from __future__ import annotations

from pathlib import Path

from specbench.gate.compare import GateReport
from specbench.gate.markdown import GATE_ALIGN, GATE_COLUMNS, headline, rows_of
from specbench.gate.text import explanation
from specbench.render.html import VERDICT_END, VERDICT_START, inline, page, rows_table
from specbench.store.files import write_atomic


def verdict_html(report: GateReport) -> str:
    """The verdict section: headline, failures, notes, every check."""
    kind = "verdict-pass" if report.exit_code == 0 else "verdict-fail"
    problems = report.with_verdict("regression") + report.with_verdict("missing")
    parts = [
        '<section id="gate">',
        f'<h2 class="{kind}">{inline(headline(report))}</h2>',
    ]
    if problems:
        parts.append("<ul>" + "".join(f"<li>{inline(explanation(r))}</li>" for r in problems))
        parts.append("</ul>")
    parts += [f'<p class="note">{inline(note)}</p>' for note in report.notes]
    parts += [
        f"<details{' open' if problems else ''}><summary>All {len(report.comparisons)} checks"
        "</summary>",
        rows_table(GATE_COLUMNS, rows_of(report), GATE_ALIGN, "Gate checks"),
        "</details></section>",
    ]
    return "\n".join(parts)


def write_html(report: GateReport, path: Path) -> None:
    """The verdict as one self-contained page at `path` (written atomically)."""
    body = f"<h1>specbench gate</h1>\n{VERDICT_START}{verdict_html(report)}{VERDICT_END}"
    write_atomic(Path(path), page("specbench gate", body))
