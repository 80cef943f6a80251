"""Terminal tables that fit (issue 42): column widths that cut no word, workload names
shortened only as far as the width needs and always distinct, and the gate's findings at
80, 100 and 120 columns."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from specbench.render.verdict import Check, Verdict, findings, verdict_terminal
from specbench.render.widths import (
    Bounds,
    fitted_table,
    shorter_workloads,
    spread,
    with_workload,
    wrap_key,
)

WORKLOADS = [
    "speed-bench-qualitative",
    "speed-bench-throughput_1k",
    "speed-bench-throughput_8k",
]


def rendered(renderables: list, width: int) -> list[str]:
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None, legacy_windows=False)
    for renderable in renderables:
        console.print(renderable, highlight=False)
    return [line.rstrip() for line in out.getvalue().splitlines()]


def test_workload_names_lose_their_shared_words_then_their_middle_never_merging() -> None:
    steps = list(shorter_workloads(WORKLOADS))
    assert dict(steps[0].names) == {name: name for name in WORKLOADS} and steps[0].caption == ""
    assert dict(steps[1].names) == {
        "speed-bench-qualitative": "qualitative",
        "speed-bench-throughput_1k": "throughput_1k",
        "speed-bench-throughput_8k": "throughput_8k",
    }
    assert steps[1].caption == "workloads shown without `speed-bench-`"
    assert dict(steps[2].names)["speed-bench-throughput_1k"] == "throug…ut_1k"  # 12 characters
    for step in steps:
        assert len(set(step.names.values())) == len(WORKLOADS)
    assert steps[2].caption == "workloads shown without `speed-bench-`; cut in the middle (…)"
    assert dict(steps[-1].names) == {  # the shortest, 5 characters: the ends tell them apart
        "speed-bench-qualitative": "qu…ve",
        "speed-bench-throughput_1k": "th…1k",
        "speed-bench-throughput_8k": "th…8k",
    }
    # A middle cut that would merge two workloads is never offered.
    assert [dict(s.names) for s in shorter_workloads(["abcdefgh", "abcxyfgh"])] == [
        {"abcdefgh": "abcdefgh", "abcxyfgh": "abcxyfgh"}
    ]
    one = list(shorter_workloads(["speed-bench-qualitative"]))
    assert dict(one[1].names) == {"speed-bench-qualitative": "qualitative"}
    key = "baseline/speed-bench-qualitative/c16/l1/r0"
    assert with_workload(key, one[1].names) == "baseline/qualitative/c16/l1/r0"


def test_spread_gives_each_column_its_longest_word_and_the_spare_where_it_saves_a_wrap() -> None:
    columns = [Bounds(10, 12), Bounds(20, 20), Bounds(4, 11)]
    assert spread(columns, 33) is None  # 34 is the least
    assert spread(columns, 36) == [12, 20, 4]  # 2 unwrap the first; 7 would be needed next
    assert spread(columns, 43) == [12, 20, 11]
    assert spread(columns, 80) == [12, 20, 11]  # never wider than the longest line


@pytest.mark.parametrize("width", [60, 80, 100, 120])
def test_a_fitted_table_cuts_no_cell_and_fits_or_says_it_cannot(width: int) -> None:
    headers = ["cell", "ok/all", "tok/s/GPU", "TTFT p50 ms", "AL"]
    rows = [
        ["baseline/speed-bench-qualitative/c16/r0", "80/80", "3,029.1", "1,234.5", "–"],
        ["eagle3/speed-bench-qualitative/c16/r0", "79/80", "5,612.0", "987.6", "2.81"],
    ]
    table = fitted_table(headers, ["left", "right", "right", "right", "right"], rows, width)
    if width < 81:  # 39 + 6 + 9 + 7 + 4 of words, 6 of borders, 10 of padding
        assert table is None
        return
    assert table is not None
    lines = rendered([table], width)
    assert max(len(line) for line in lines) <= width
    assert "…" not in "\n".join(lines)
    for row in rows:
        assert any(all(cell in line for cell in row) for line in lines), row


def check(cell: str, metric: str, verdict: str, brief: tuple[str, ...], **kw: object) -> Check:
    text = {"regression": "REGRESSION", "within_noise": "pass (noise)", "pass": "pass"}
    texts = (cell, metric, "b", "c", "d", "t", "x", "r")
    return Check(texts, verdict, text.get(verdict, verdict), brief=brief, **kw)  # type: ignore[arg-type]


CELLS = [f"eagle3/{w}/c{c}" for w in WORKLOADS for c in (16, 64)]
REGRESSIONS = [
    check(cell, metric, "regression", ("2.823", "2.429", "-14.0%", "-2%"), rule="within-launch")
    for cell in CELLS
    for metric in ("acceptance_length", "interactivity_tok_s_per_user")
]
PASSES = [
    check(cell, "ttft_ms_median", "pass", ("21.20", "21.31", "+0.5%", "+10%")) for cell in CELLS
]
NOISE = [
    check(CELLS[0], "output_tok_s_per_gpu", "within_noise", ("1,057", "1,001", "-5.3%", "-5%"))
]
VERDICT = Verdict(
    headline="❌ specbench gate: regression — suite `m3`: 12 regressed, 19 checks",
    passed=False,
    failures=(),
    notes=("suite 'm3': same workloads",),
    checks=tuple(PASSES + NOISE + REGRESSIONS),
)


def test_findings_list_failures_first_and_one_row_for_a_cell_missing_whole() -> None:
    listed = findings(VERDICT.checks)
    assert [c.verdict for c in listed] == ["regression"] * 12 + ["within_noise"]
    gone = [
        check("eagle3/x/c8", m, "missing", ("1", "–", "–", "-2%"), cell_missing=True) for m in "abc"
    ]
    rows = findings((*gone, *PASSES[:1]))
    assert [(c.cell, c.metric, c.brief) for c in rows] == [
        ("eagle3/x/c8", "every metric (3)", ("–", "–", "–", "–"))
    ]


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_gate_terminal_fits_and_names_every_finding_whole(width: int) -> None:
    lines = rendered(verdict_terminal(VERDICT, width, ["out/gate.md", "out/gate.json"]), width)
    assert max(len(line) for line in lines) <= width
    text = "\n".join(lines)
    rows = [line for line in lines if line.startswith("REGRESSION")]
    assert len(rows) == 12  # one line each, numbers whole
    assert all(line.split()[-4:] == ["2.823", "2.429", "-14.0%", "-2%"] for line in rows)
    assert text.count("interactivity_tok_s_per_user") == 6
    assert "ttft_ms_median" not in text  # passes are counted, not listed
    assert " ".join(text.split("19 checks: ")[1].split()) == (
        "12 REGRESSION, 1 pass (noise) listed; 6 pass not listed; every check in full: "
        "out/gate.md, out/gate.json"
    )  # the last line, wrapped where narrow
    assert "listed checks judged by: within-launch (12)" in text
    assert len(lines) <= 27  # 13 findings, header, cells' names, notes, the last two lines
    assert "…" not in text  # no name cut: whole, or without the words all workloads share
    headings = [line.strip() for line in lines if line.strip().startswith("eagle3/")]
    if width == 120:  # every cell whole, on every row
        assert sum(line.split()[1] in CELLS for line in rows) == 12 and headings == []
    if width == 100:  # each cell's name on a row of its own, whole, above its findings
        assert headings == CELLS
    if width == 80:  # and narrower, without the words every workload shares, said once
        assert headings == [cell.replace("speed-bench-", "") for cell in CELLS]
        assert "workloads shown without `speed-bench-`" in text


def test_a_cell_key_breaks_only_after_a_slash_and_keeps_every_part_whole() -> None:
    key = "baseline/qualitative/c8/r0"
    assert wrap_key(key, 40) == key
    assert wrap_key(key, 20) == "baseline/\nqualitative/c8/r0"
    assert wrap_key(key, 12) == "baseline/\nqualitative/\nc8/r0"
    assert wrap_key(key, 4) == "baseline/\nqualitative/\nc8/\nr0"  # a long part stays whole
    for width in range(4, 30):
        assert wrap_key(key, width).replace("\n", "") == key
