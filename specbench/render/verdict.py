"""The gate's verdict through the report's renderers: markdown, HTML and the terminal.

`specbench.gate` says what the verdict is (`Verdict`: the headline, the failures, the
notes, every check's display strings); this module prints it: the markdown job summary
(`--summary`, `$GITHUB_STEP_SUMMARY`), the HTML section and page (`gate --html`, which
`report --gate` embeds) with the report's `rows_table` and `page`, and the CI log's rich
table. The JUnit XML is the gate's own format (`gate.junit`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from specbench.common.text import Align, markdown_cell, markdown_table
from specbench.render.html import VERDICT_END, VERDICT_START, inline, page, rows_table

if TYPE_CHECKING:
    from rich.table import Table as RichTable

#: The checks' columns (the terminal adds `note`); cell, metric left; baseline, current,
#: change right; tolerance left; detectable right; decided by, verdict left.
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
#: The terminal's style of each verdict: failures in red, passes plain, so the eye lands
#: on what failed.
_STYLE = {
    "regression": "bold red",
    "missing": "bold yellow",
    "improved": "green",
    "within_noise": "cyan",
    "new": "blue",
    "pass": "",
}


@dataclass(frozen=True, slots=True)
class Check:
    """One check (cell × metric) as printed: its cells up to `decided by`, its verdict."""

    texts: tuple[str, ...]
    verdict: str  # the kind: pass, improved, within_noise, regression, new, missing
    verdict_text: str
    note: str = ""

    @property
    def failed(self) -> bool:
        return self.verdict in ("regression", "missing")

    def row(self) -> list[str]:
        """The markdown and HTML row: a failure's verdict in bold."""
        verdict = f"**{self.verdict_text}**" if self.failed else self.verdict_text
        return [*self.texts, verdict]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the gate decided, in display strings; nothing here computes a number."""

    headline: str
    passed: bool
    failures: tuple[str, ...]  # one sentence per regression, then per missing check
    notes: tuple[str, ...]
    checks: tuple[Check, ...]


def verdict_markdown(verdict: Verdict) -> str:
    """The job summary: headline, failures, notes, then every check (collapsed)."""
    lines = [f"### {verdict.headline}", ""]
    lines += [f"- {markdown_cell(failure)}" for failure in verdict.failures]
    if verdict.failures:
        lines.append("")
    lines += [f"> {markdown_cell(note)}  " for note in verdict.notes]
    lines += ["", "<details><summary>All checks</summary>", ""]
    lines += markdown_table(GATE_COLUMNS, [c.row() for c in verdict.checks], align=GATE_ALIGN)
    lines += ["", "</details>", ""]
    return "\n".join(lines)


def verdict_html(verdict: Verdict) -> str:
    """The verdict section: headline, failures, notes, every check."""
    kind = "verdict-pass" if verdict.passed else "verdict-fail"
    parts = ['<section id="gate">', f'<h2 class="{kind}">{inline(verdict.headline)}</h2>']
    if verdict.failures:
        parts.append("<ul>" + "".join(f"<li>{inline(f)}</li>" for f in verdict.failures))
        parts.append("</ul>")
    parts += [f'<p class="note">{inline(note)}</p>' for note in verdict.notes]
    rows = [c.row() for c in verdict.checks]
    parts += [
        f"<details{' open' if verdict.failures else ''}><summary>All {len(rows)} checks</summary>",
        rows_table(GATE_COLUMNS, rows, GATE_ALIGN, "Gate checks"),
        "</details></section>",
    ]
    return "\n".join(parts)


def verdict_page(verdict: Verdict) -> str:
    """The verdict as one self-contained page; `report --gate` finds its section by the
    markers around it."""
    body = f"<h1>specbench gate</h1>\n{VERDICT_START}{verdict_html(verdict)}{VERDICT_END}"
    return page("specbench gate", body)


def verdict_table(verdict: Verdict) -> RichTable:
    """The CI log's table: every check with its note, each verdict in its style."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="specbench gate", title_justify="left")
    for column, align in zip(GATE_COLUMNS, GATE_ALIGN, strict=True):
        table.add_column(column, justify=align, no_wrap=column in ("cell", "metric"))
    table.add_column("note", overflow="fold")
    for check in verdict.checks:
        style = _STYLE[check.verdict]
        text = check.verdict_text
        table.add_row(
            # escaped: a metric such as `acceptance_length[coding]` is not rich markup
            *map(escape, check.texts),
            f"[{style}]{text}[/]" if style else text,
            escape(check.note),
        )
    return table
