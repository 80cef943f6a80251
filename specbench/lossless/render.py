"""`lossless.md`: the lossless check and the three acceptance lengths, ready to paste."""

from __future__ import annotations

from specbench.common.text import EN_DASH, fixed, markdown_table
from specbench.lossless.model import CellCheck, LosslessReport, MatchCount
from specbench.results.missing import describe_missing

#: Diverged pairs listed per cell in the markdown (all of them are in lossless.json).
MAX_LISTED_DIVERGENCES = 10

TURN_RULE = (
    "Pairs are keyed by (question_id, turn). Turn 0 is always compared. A later turn is "
    "sent with the target's own earlier answers as history, so it is compared only when "
    "every earlier turn of its conversation matched exactly (then both sides sent the same "
    "prompt); otherwise it is counted as not compared (`history_diverged`)."
)
DEPTH_HINT = (
    "Reading divergences: a broken draft or verifier changes outputs early (first "
    "divergence in the first tokens) and in many requests; batched floating-point "
    "nondeterminism changes them late, after a long identical prefix, in few requests, and "
    "more often at higher concurrency. Compare with two baseline runs to see the drift floor."
)
AL_NOTES = (
    "Server counters: 1 + Δaccepted / Δdrafts over the window, step-weighted (vLLM's number). "
    "Per-request pooled: 1 + Σaccepted / Σsteps of vLLM's per-request "
    "`metrics.speculative_decoding` objects, step-weighted; equals the counters when every "
    "request reported it. Tokens per chunk: per request Σ tokens of chunks 2..n / (n − 1) "
    "(prefill chunk dropped, last chunk kept), then the plain mean over requests (an older "
    "estimate, not the official figure). Official (SPEED-Bench, specdec_bench's definition, "
    "what model cards publish): per question Σ tokens / Σ chunks over all its turns (prefill "
    "chunk counted, a final EOS removed), mean over questions; ≈ marks merged chunks seen. "
    "See docs/acceptance-length.md."
)


def _rate(count: MatchCount) -> str:
    if count.exact_match_rate is None:
        return "–"
    return f"{count.exact_match_rate:.3f} ({count.num_matched}/{count.num_compared})"


def _fixed3(value: float | None, digits: int = 3) -> str:
    return fixed(value, digits, missing=EN_DASH)


def _depth(cell: CellCheck) -> str:
    depth = cell.divergence
    if depth.count == 0 or depth.median is None:
        return "–"
    unit = "tok" if depth.unit == "token" else "char"
    return f"{depth.min} / {depth.median:g} / {depth.max} {unit}"


def _not_compared(cell: CellCheck) -> str:
    return ", ".join(f"{n} {reason}" for reason, n in cell.not_compared.items()) or "0"


def _where(cell: CellCheck) -> str:
    return f"{cell.dataset_dir} c{cell.concurrency} r{cell.repeat}"


def lossless_section(report: LosslessReport, heading_level: int = 2) -> str:
    """The lossless check as markdown: match rates, divergence depth, per category."""
    h = "#" * heading_level
    lines = [f"{h} Lossless check (temperature 0)", ""]
    if not report.cells:
        lines.append("No speculative cell has a baseline cell on the same prompts.")
    else:
        verdict = "PASS" if report.passed else "FAIL"
        lines.append(
            f"**{verdict}**: every compared cell must reach an exact-match rate of "
            f"{report.min_match_rate:g}."
        )
        lines.append("")
        rows = [
            [
                c.speculative,
                c.baseline,
                _where(c),
                _rate(c.overall),
                _rate(c.first_turns),
                _rate(c.later_turns),
                _depth(c),
                _not_compared(c),
                c.compared_by or "–",
                c.skipped or ("pass" if c.passed else "FAIL"),
            ]
            for c in report.cells
        ]
        lines += markdown_table(
            (
                "Speculative",
                "Baseline",
                "Cell",
                "Exact match",
                "Turn 0",
                "Later turns",
                "First divergence min / median / max",
                "Not compared",
                "Compared by",
                "Result",
            ),
            rows,
            left=3,
        )
        lines += ["", f"_{TURN_RULE}_", "", f"_{DEPTH_HINT}_", ""]
        lines += _categorymarkdown_table(report, h)
        lines += _divergence_lists(report, h)
    if report.unpaired:
        lines += [f"{h}# Speculative cells without a baseline cell", ""]
        lines += [f"- {note}" for note in report.unpaired]
        lines.append("")
    if report.incomplete:
        lines += [f"{h}# Cells whose records disagree with their summary (not compared)", ""]
        lines += [f"- {note}" for note in report.incomplete]
        lines.append("")
    if report.missing:
        lines += [f"{h}# Cells of the suite with no results", ""]
        lines += [f"- {key}" for key in report.missing]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _categorymarkdown_table(report: LosslessReport, h: str) -> list[str]:
    rows = [
        [c.speculative, _where(c), name, _rate(count)]
        for c in report.cells
        for name, count in c.per_category.items()
        if count.num_compared
    ]
    if not rows:
        return []
    lines = [f"{h}# Exact-match rate by category", ""]
    return [
        *lines,
        *markdown_table(("Speculative", "Cell", "Category", "Exact match"), rows, left=3),
        "",
    ]


def _divergence_lists(report: LosslessReport, h: str) -> list[str]:
    lines: list[str] = []
    for cell in report.cells:
        if not cell.divergences:
            continue
        shown = cell.divergences[:MAX_LISTED_DIVERGENCES]
        lines += [f"{h}# Divergences: {cell.speculative} vs {cell.baseline}, {_where(cell)}", ""]
        buckets = ", ".join(f"{name}: {n}" for name, n in cell.divergence.buckets.items())
        unit = cell.divergence.unit or "position"
        lines += [f"First-divergence {unit} index, by bucket: {buckets}.", ""]
        rows = [
            [
                d.question_id,
                str(d.turn),
                d.category,
                str(d.first_divergence),
                f"{d.baseline_length} / {d.speculative_length}",
            ]
            for d in shown
        ]
        lines += markdown_table(
            ("Question", "Turn", "Category", "First divergence", "Length base / spec"), rows, left=3
        )
        if len(cell.divergences) > len(shown):
            lines.append(f"\n_{len(cell.divergences) - len(shown)} more in lossless.json._")
        lines.append("")
    return lines


def acceptance_section(report: LosslessReport, heading_level: int = 2) -> str:
    """The three acceptance-length definitions side by side, one row per speculative cell."""
    h = "#" * heading_level
    lines = [f"{h} Acceptance length: four definitions", ""]
    if not report.acceptance:
        return "\n".join([*lines, "No speculative cell."]) + "\n"
    rows = [
        [
            a.label,
            f"{a.dataset_dir} c{a.concurrency} r{a.repeat}",
            _fixed3(a.server_counters_al),
            _fixed3(a.per_request_pooled_al),
            "–" if a.pooled_vs_counters is None else f"{a.pooled_vs_counters:+.2%}",
            _fixed3(a.tokens_per_chunk_al),
            ("≈" if a.official_merged_chunks else "") + _fixed3(a.official_al),
            _fixed3(a.per_request_coverage, 2),
            f"{a.num_drafts if a.num_drafts is not None else '–'} / {a.num_spec_steps}",
        ]
        for a in report.acceptance
    ]
    lines += markdown_table(
        (
            "Speculative",
            "Cell",
            "Server counters (step-weighted)",
            "Per-request pooled (step-weighted)",
            "Pooled vs counters",
            "Tokens per chunk (mean over requests)",
            "Official SPEED-Bench (mean over questions)",
            "Per-request coverage",
            "Steps: counters / per-request",
        ),
        rows,
        left=2,
    )
    return "\n".join([*lines, "", f"_{AL_NOTES}_"]) + "\n"


def lossless_markdown(report: LosslessReport) -> str:
    """The whole `lossless.md`."""
    head = f"# specbench lossless\n\nResults: `{report.results_dir}`.\n"
    if report.baselines:
        head += f"Baseline: {', '.join(report.baselines)}. "
    if report.speculative:
        head += f"Speculative: {', '.join(report.speculative)}."
    return "\n".join([head.rstrip() + "\n", lossless_section(report), acceptance_section(report)])


def summary_lines(report: LosslessReport) -> list[str]:
    """A few plain lines for the terminal: one per compared cell, then the verdict."""
    lines = []
    for cell in report.cells:
        head = f"{cell.speculative} vs {cell.baseline} {_where(cell)}:"
        if cell.skipped:
            lines.append(f"{head} not compared ({cell.skipped})")
            continue
        result = "pass" if cell.passed else "FAIL"
        lines.append(
            f"{head} exact match {_rate(cell.overall)}, first divergence {_depth(cell)}, "
            f"by {cell.compared_by} → {result}"
        )
    lines += [f"unpaired: {note}" for note in report.unpaired]
    lines += [f"incomplete: {note}" for note in report.incomplete]
    missing = describe_missing(report.missing)
    if missing:
        lines.append(f"missing: {missing}")
    for row in report.acceptance:
        lines.append(
            f"AL {row.label} {row.dataset_dir} c{row.concurrency} r{row.repeat}: counters "
            f"{_fixed3(row.server_counters_al)}, per-request pooled "
            f"{_fixed3(row.per_request_pooled_al)}, tokens per chunk "
            f"{_fixed3(row.tokens_per_chunk_al)}, official SPEED-Bench "
            f"{_fixed3(row.official_al)}"
        )
    return lines
