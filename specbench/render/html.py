"""report.html: every table and figure of the report in one self-contained page.

The page loads nothing: its CSS and script (`assets/`) are inlined, figures are inline
SVG, tables are real `<table>`s of the same display rows report.md prints (one table
data, several renderers; nothing here computes a number). Markdown fragments (inline
emphasis in table cells, the lossless and cost sections) go through markdown-it with raw
HTML disabled, so text from a results directory cannot inject markup. `page` is shared
with the gate's HTML verdict.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING

from specbench.analysis.header import HEADER
from specbench.analysis.table import Table
from specbench.render.layout import Layout

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

    from specbench.analysis.provenance import Provenance


@dataclass(frozen=True, slots=True)
class HtmlFigure:
    """One figure as inline SVG, with the cells it rests on and its hover values."""

    name: str
    title: str
    svg: str
    basis: Table | None = None
    #: Hover text per point index (`point-<i>-…` groups of the SVG), from a table's rows.
    points: tuple[str, ...] = ()
    #: The AL definition it plots ("official" / "step_weighted"), None when not an AL figure.
    al_definition: str | None = None
    #: True when the page also holds the same figure in the other definition.
    al_pair: bool = False
    #: The table it was drawn from; the page places it beside that table.
    table: str | None = None
    #: The card's own figure: shown among the card's tables, before its table.
    card: bool = False


@dataclass(frozen=True, slots=True)
class HtmlReport:
    """What the page shows, in order; every part is built by the analysis layer."""

    title: str
    results: tuple[str, ...]  # the results directories, by their report names
    baselines: tuple[str, ...]
    speculative: tuple[str, ...]
    layout: Layout[HtmlFigure]
    markdown_sections: tuple[str, ...] = ()
    not_built: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    provenance: tuple[tuple[str, Provenance], ...] = ()  # (report name, its provenance)
    gate: str | None = None  # the gate's verdict section (`verdict_fragment`), when given


@cache
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


def inline(text: str) -> str:
    """A display string's inline markdown (`**bold**`, `code`) as HTML, everything escaped."""
    return str(_markdown().renderInline(text))


def block(text: str) -> str:
    """A markdown section (headings, tables, lists) as HTML; raw HTML in it is escaped."""
    rendered = str(_markdown().render(text))
    return rendered.replace("<table>", '<div class="scroll"><table>').replace(
        "</table>", "</table></div>"
    )


@cache
def _asset(name: str) -> str:
    return files("specbench.render").joinpath("assets", name).read_text(encoding="utf-8")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def rows_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    aligns: Sequence[str],
    caption: str,
    bold_rows: frozenset[int] = frozenset(),
) -> str:
    """A `<table>` of display strings: header row, body, and the bold total in `<tfoot>`.

    The last row moves into `<tfoot>` when it is bold (a total such as Overall) and the
    table has more than two rows, so sorting the body keeps it last.
    """
    head = "".join(
        f'<th scope="col" class="{"num" if a == "right" else ""}">{html.escape(c)}</th>'
        for c, a in zip(columns, aligns, strict=True)
    )
    indexed = list(enumerate(rows))
    total = indexed[-1] if len(indexed) > 2 and indexed[-1][0] in bold_rows else None
    body = indexed[:-1] if total else indexed

    def row_html(index: int, row: Sequence[str]) -> str:
        cells = []
        for column, (text, align) in enumerate(zip(row, aligns, strict=True)):
            tag = "th" if column == 0 else "td"
            scope = ' scope="row"' if column == 0 else ""
            kind = ' class="num"' if align == "right" else ""
            cells.append(f"<{tag}{scope}{kind}>{inline(text)}</{tag}>")
        bold = ' class="bold"' if index in bold_rows else ""
        return f"<tr{bold}>{''.join(cells)}</tr>"

    parts = [
        '<div class="scroll"><table>',
        f"<caption>{html.escape(caption)}</caption>",
        f"<thead><tr>{head}</tr></thead>",
        "<tbody>" + "".join(row_html(i, r) for i, r in body) + "</tbody>",
    ]
    if total:
        parts.append(f"<tfoot>{row_html(*total)}</tfoot>")
    parts.append("</table></div>")
    return "\n".join(parts)


def table_html(table: Table, *, heading: int = 3, element_id: str | None = None) -> str:
    """A report table as a section: heading, `<table>`, its footnotes below it. A folded
    table (`Table.shown_rows`) shows those rows, and every row one click away."""
    ident = element_id or f"table-{_slug(table.name)}"
    parts = [
        f'<section class="table" id="{ident}" data-table="{html.escape(table.name)}">',
        f"<h{heading}>{html.escape(table.title)}</h{heading}>",
    ]
    if table.folded():
        shown = sorted(table.shown_rows or ())
        bold = frozenset(i for i, row in enumerate(shown) if row in table.bold_rows)
        rows = [table.rows[i] for i in shown]
        parts += [
            rows_table(table.columns, rows, table.alignment(), table.title, bold),
            f'<details class="folded"><summary>{html.escape(table.folded_note)}: all '
            f"{len(table.rows)} rows</summary>",
        ]
    parts.append(
        rows_table(table.columns, table.rows, table.alignment(), table.title, table.bold_rows)
    )
    if table.folded():
        parts.append("</details>")
    parts += [f'<p class="note">{inline(note)}</p>' for note in table.footnotes]
    parts.append("</section>")
    return "\n".join(parts)


def facts_html(table: Table) -> str:
    """A two-column table of facts (the card's header) as a compact list: two facts a row
    on a wide screen, so the headline and the card's tables stay on the first screen."""
    items = "".join(
        f"<div><dt>{inline(field)}</dt><dd>{inline(value)}</dd></div>"
        for field, value in table.rows
    )
    notes = "".join(f'<p class="note">{inline(note)}</p>' for note in table.footnotes)
    return (
        f'<section class="facts" id="table-{_slug(table.name)}" '
        f'data-table="{html.escape(table.name)}"><h2 class="facts">{html.escape(table.title)}'
        f"</h2><dl>{items}</dl>{notes}</section>"
    )


#: The gate's verdict inside its page (`gate --html`), which `report --gate` embeds.
VERDICT_START = "<!-- specbench-gate-verdict -->"
VERDICT_END = "<!-- /specbench-gate-verdict -->"


def verdict_fragment(text: str, source: str) -> str:
    """The verdict section of a page `gate --html` wrote; SpecbenchError if it holds none."""
    from specbench.common.errors import SpecbenchError

    start, end = text.find(VERDICT_START), text.find(VERDICT_END)
    if start < 0 or end < start:
        raise SpecbenchError(f"--gate {source}: not a page `specbench gate --html` wrote")
    return text[start + len(VERDICT_START) : end]


def _figure_html(figure: HtmlFigure, index: int, anchor: str) -> str:
    attributes = [f'id="{anchor}"', f'data-figure="{html.escape(figure.name)}"']
    if figure.points:
        attributes.append(f"data-points='{html.escape(json.dumps(figure.points), quote=True)}'")
    if figure.al_definition:
        attributes.append(f'data-al="{figure.al_definition}"')
    if figure.al_pair:
        attributes.append("data-al-pair")
    parts = [
        f"<figure {' '.join(attributes)}>",
        f"<figcaption>Figure {index}. {html.escape(figure.title)}</figcaption>",
        figure.svg,
    ]
    if figure.basis is not None:
        parts += [
            f"<details><summary>The {len(figure.basis.rows)} cell(s) this figure rests on"
            "</summary>",
            table_html(figure.basis, heading=4, element_id=f"cells-{anchor}"),
            "</details>",
        ]
    parts.append("</figure>")
    return "\n".join(parts)


def _list_section(title: str, intro: str, items: Sequence[str]) -> str:
    entries = "".join(f"<li>{inline(item)}</li>" for item in items)
    return (
        f'<section class="missing" id="{_slug(title)}"><h2>{html.escape(title)}</h2>'
        + (f"<p>{html.escape(intro)}</p>" if intro else "")
        + f"<ul>{entries}</ul></section>"
    )


def _provenance_html(provenance: Sequence[tuple[str, Provenance]]) -> str:
    parts = ['<section id="provenance"><h2>Provenance</h2>']
    for name, record in provenance:
        parts.append(f"<details open><summary><code>{html.escape(name)}</code></summary>")
        parts += [f'<p class="note">{html.escape(note)}</p>' for note in record.notes]
        if record.left_out:
            parts.append(
                "<p>Rows left out of the prepared data (<code>data prepare --skip-gated</code>, "
                "measured with <code>accept_partial</code>):</p><ul>"
                + "".join(f"<li>{html.escape(line)}</li>" for line in record.left_out)
                + "</ul>"
            )
        parts += [
            table_html(t, heading=3, element_id=f"{t.name}-{i}")
            for i, t in enumerate(record.tables)
        ]
        for workload, text in record.prepared:
            parts.append(
                f"<details><summary>prepared.json of {html.escape(workload)}</summary>"
                f"<pre>{html.escape(text)}</pre></details>"
            )
        parts.append("</details>")
    parts.append("</section>")
    return "\n".join(parts)


def page(title: str, body: str, *, controls: str = "") -> str:
    """A whole HTML document: inline CSS and script, nothing fetched."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            # No request may leave the file, whatever a fragment holds.
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
            f"<title>{html.escape(title)}</title>",
            f"<style>{_asset('report.css')}</style></head>",
            f"<body><main>{controls}",
            body,
            f"</main><script>{_asset('report.js')}</script></body></html>",
        ]
    )


_AL_SWITCH = (
    '<span role="group" aria-label="AL definition shown">AL definition: '
    '<label><input type="radio" name="al-definition" value="both" checked> both</label>'
    '<label title="SPEED-Bench: per question, Σ tokens / Σ chunks, mean over questions">'
    '<input type="radio" name="al-definition" value="official"> official (SPEED-Bench)</label>'
    '<label title="vLLM\'s counters: 1 + Σ accepted / Σ drafts">'
    '<input type="radio" name="al-definition" value="step_weighted"> step-weighted '
    "(vLLM's counters)</label></span>"
)


@dataclass(slots=True)
class _Numbering:
    """Figures numbered in print order, each with an anchor of its own: the other AL
    definition's copy of a figure shares its name, so its anchor adds the definition."""

    count: int = 0
    seen: set[str] = field(default_factory=set)

    def next(self, figure: HtmlFigure) -> tuple[int, str]:
        self.count += 1
        anchor = f"figure-{_slug(figure.name)}"
        if anchor in self.seen:
            anchor += f"-{_slug(figure.al_definition or str(self.count))}"
        self.seen.add(anchor)
        return self.count, anchor


def _blocks_html(blocks: Sequence[Table | HtmlFigure], numbering: _Numbering) -> list[str]:
    return [
        table_html(b) if isinstance(b, Table) else _figure_html(b, *numbering.next(b))
        for b in blocks
    ]


def _toc(report: HtmlReport) -> str:
    """Every table and figure by its anchor, folded: the first screen stays the card's."""
    layout = report.layout
    entries: dict[str, str] = {}  # anchor → entry; a figure's other-AL copy is listed once
    for block in [*layout.lead, *layout.card, *layout.figures, *layout.details]:
        kind = "table" if isinstance(block, Table) else "figure"
        anchor = f"{kind}-{_slug(block.name)}"
        label = ("" if kind == "table" else "Figure: ") + block.title
        entries.setdefault(anchor, f'<li><a href="#{anchor}">{html.escape(label)}</a></li>')
    return (
        '<nav class="toc" aria-label="Contents"><details><summary>Contents: '
        f"{len(entries)} tables and figures</summary><ul>{''.join(entries.values())}</ul>"
        "</details></nav>"
    )


def _controls(report: HtmlReport) -> str:
    """One sticky bar: the AL-definition switch and the contents, folded."""
    return f'<div class="controls">{_AL_SWITCH}{_toc(report)}</div>'


def report_page(report: HtmlReport) -> str:
    """The report as one HTML page: the lead (what was measured, the headline), the card's
    tables and figure, the other figures and tables, what was left out, the provenance
    (`render.layout`)."""
    layout = report.layout
    numbering = _Numbering()
    body = [f"<h1>{html.escape(report.title)}</h1>"]
    body += [facts_html(t) if t.name == HEADER else table_html(t) for t in layout.lead]
    body.append(_controls(report))
    if report.gate is not None:
        body.append(report.gate)
    body.append('<section id="card"><h2>The model card\'s tables</h2>')
    body += _blocks_html(layout.card, numbering)
    if not layout.card:
        body.append(
            "<p>No table of the card could be built from these results (see Not built).</p>"
        )
    body.append("</section>")
    if layout.figures:
        body.append('<section id="figures"><h2>Figures</h2>')
        body += _blocks_html(layout.figures, numbering)
        body.append("</section>")
    if layout.details:
        body.append('<section id="tables"><h2>More tables</h2>')
        body += _blocks_html(layout.details, numbering)
        body.append("</section>")
    body += [f'<section class="extra">{block(s)}</section>' for s in report.markdown_sections]
    if report.not_built:
        body.append(_list_section("Not built", "", report.not_built))
    if report.failed:
        body.append(_list_section("Failed cells", "Left out of every table.", report.failed))
    if report.missing:
        body.append(
            _list_section(
                "Missing cells",
                "Cells of the suite with no results (never measured, or "
                "interrupted); `specbench run` on the same --output measures them.",
                report.missing,
            )
        )
    body.append(_provenance_html(report.provenance))
    return page(report.title, "\n".join(b for b in body if b))
