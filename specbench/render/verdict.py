"""The gate's verdict through the report's renderers: markdown, HTML and the terminal.

`specbench.gate` says what the verdict is (`Verdict`: the headline, the failures, the
notes, every check's display strings); this module prints it: the markdown job summary
(`--summary`, `$GITHUB_STEP_SUMMARY`), the HTML section and page (`gate --html`, which
`report --gate` embeds) with the report's `rows_table` and `page`, and the CI log's rich
table. The JUnit XML is the gate's own format (`gate.junit`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from specbench.common.text import Align, markdown_cell, markdown_table
from specbench.render.html import VERDICT_END, VERDICT_START, inline, page, rows_table

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

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
    #: The terminal's short cells: baseline, current, change, allowed (`gate.text`).
    brief: tuple[str, ...] = ()
    #: The whole cell is absent from the results (one terminal row stands for its checks).
    cell_missing: bool = False
    #: The rule that judged it (`within-launch`, `launches (3 vs 3, …)`), "" when none.
    rule: str = ""

    @property
    def cell(self) -> str:
        return self.texts[0]

    @property
    def metric(self) -> str:
        return self.texts[1]

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


#: The verdicts the terminal lists, in this order; passes are counted, not listed.
LISTED = ("regression", "missing", "within_noise", "improved", "new")
#: The terminal's columns: one finding per row, each cell short (`Check.brief`).
FINDING_COLUMNS = ("verdict", "cell", "metric", "baseline", "current", "change", "allowed")
FINDING_ALIGN: tuple[Align, ...] = ("left", "left", "left", "right", "right", "right", "right")


def findings(checks: Sequence[Check]) -> list[Check]:
    """The checks the terminal lists, by verdict in `LISTED`'s order (failures first); a
    cell missing from the results is one row, `every metric (9)`, not one per metric."""
    from dataclasses import replace

    listed: list[Check] = []
    whole: set[str] = set()
    for kind in LISTED:
        for check in checks:
            if check.verdict != kind or check.cell in whole:
                continue
            if check.cell_missing:
                whole.add(check.cell)
                count = sum(c.cell == check.cell and c.cell_missing for c in checks)
                texts = (check.cell, f"every metric ({count})", *check.texts[2:])
                check = replace(check, texts=texts, brief=("–",) * len(check.brief))
            listed.append(check)
    return listed


def _verdict_cell(check: Check) -> Text:
    from rich.text import Text

    return Text(check.verdict_text, style=_STYLE[check.verdict])


def findings_table(listed: Sequence[Check], width: int) -> RenderableType:
    """The findings in `width` columns, no number or name cut: one row each with its cell
    (without the words every workload shares, when that is needed); narrower, each cell's
    name on a row of its own above its checks; narrower still, workload names cut in the
    middle (distinct); past that, rich folds long cells."""
    from rich import box

    from specbench.render.widths import CUT, fitted_table, shorter_workloads, workload_of

    # A rule under the header, two spaces between columns (one of padding, one of box).
    options: dict[str, Any] = {
        "box": box.SIMPLE_HEAD,
        "show_edge": False,
        "pad_edge": False,
        "padding": (0, 1, 0, 0),
        "caption_justify": "left",
    }
    workloads = [workload_of(check.cell) for check in listed]
    headers, align = (
        FINDING_COLUMNS[:1] + FINDING_COLUMNS[2:],
        FINDING_ALIGN[:1] + FINDING_ALIGN[2:],
    )
    names = list(shorter_workloads(workloads))
    whole = [short for short in names if CUT not in short.caption]
    cut = [short for short in names if CUT in short.caption]
    # Names whole before one line per finding: a cut name is the last resort.
    for stacked, tries in ((False, whole), (True, whole), (False, cut), (True, cut)):
        for short in tries:
            rows = _rows(listed, short.names, stacked=stacked)
            layout = (headers, align) if stacked else (FINDING_COLUMNS, FINDING_ALIGN)
            caption = short.caption or None
            table = fitted_table(layout[0], layout[1], rows, width, caption=caption, **options)
            if table is not None:
                return table
    rows = _rows(listed, {}, stacked=True)
    table = fitted_table(headers, align, rows, width, strict=False, **options)
    assert table is not None  # not strict: always a table
    return table


def _rows(
    listed: Sequence[Check], names: Mapping[str, str], *, stacked: bool
) -> list[list[str | Text]]:
    """The findings' rows, each with its cell; `stacked`: grouped by cell, under a row that
    names it."""
    from rich.text import Text

    from specbench.render.widths import with_workload

    if not stacked:
        return [
            [_verdict_cell(c), with_workload(c.cell, names), c.metric, *c.brief] for c in listed
        ]
    rows: list[list[str | Text]] = []
    for cell in dict.fromkeys(check.cell for check in listed):
        heading = Text(with_workload(cell, names), style="bold")
        rows.append(["", heading, *([""] * (len(FINDING_COLUMNS) - 3))])
        rows += [[_verdict_cell(c), c.metric, *c.brief] for c in listed if c.cell == cell]
    return rows


def tally(verdict: Verdict, full: Sequence[str]) -> str:
    """The last line: the checks by verdict, which are listed, and where every check is:
    `34 checks: 25 REGRESSION, 3 pass (noise) listed; 6 pass not listed; every check in
    full: gate.md, gate.json`."""
    counts: dict[str, int] = {}
    for check in verdict.checks:
        counts[check.verdict] = counts.get(check.verdict, 0) + 1
    text = {check.verdict: check.verdict_text for check in verdict.checks}
    listed = ", ".join(f"{counts[k]} {text[k]}" for k in LISTED if k in counts)
    parts = [f"{listed} listed"] if listed else []
    if counts.get("pass"):
        parts.append(f"{counts['pass']} {text['pass']}" + (" not listed" if listed else ""))
    where = ", ".join(full) if full else "write it with --summary, --json or --html FILE"
    return f"{len(verdict.checks)} checks: {'; '.join(parts)}; every check in full: {where}"


def verdict_terminal(verdict: Verdict, width: int, full: Sequence[str]) -> list[RenderableType]:
    """What the terminal and the CI log show, in `width` columns: the findings table, the
    listed checks' notes, the gate's notes, the headline, and the tally (`tally`); the
    whole table (every check, its rule, p and detectable change) is in the files `full`."""
    from rich.text import Text

    listed = findings(verdict.checks)
    parts: list[RenderableType] = [findings_table(listed, width)] if listed else []
    reasons = dict.fromkeys(f"{c.cell} {c.metric}: {c.note}" for c in listed if c.note)
    parts += [Text(reason, style="dim") for reason in reasons]
    rules: dict[str, int] = {}
    for check in listed:
        if check.rule:
            rules[check.rule] = rules.get(check.rule, 0) + 1
    if rules:
        judged = ", ".join(f"{rule} ({count})" for rule, count in rules.items())
        parts.append(Text(f"listed checks judged by: {judged}"))
    parts += [Text(f"note: {note}") for note in verdict.notes]
    parts += [Text(verdict.headline), Text(tally(verdict, full))]
    return parts
