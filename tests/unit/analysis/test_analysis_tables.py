"""Report tables on hand-computed fixtures: the model cards of REFERENCE.md §1, exactly."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from analysis_fixtures import (
    QUALITATIVE,
    category,
    spec_decode,
    summary,
    write_campaign,
    write_cell,
    write_manifest,
)

from specbench.analysis import table_data as D
from specbench.analysis import tables as T
from specbench.common.errors import SpecbenchError
from specbench.render.markdown import to_markdown
from specbench.results import columns as C
from specbench.results import frame as F
from specbench.results import loading as L
from specbench.results.selection import (
    Comparison,
    check_concurrency,
    pick_concurrency,
    select_labels,
)

EAGLE = Comparison(speculative="eagle3", baseline="baseline")


@pytest.fixture
def loaded(tmp_path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    cells, _ = L.load_cells([write_campaign(tmp_path / "campaign")])
    return F.cells_frame(cells), F.category_frame(cells)


def _body(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith("|")]


def test_al_by_domain_reproduces_the_card(loaded: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    frame, categories = loaded
    table = T.al_by_domain(frame, categories, QUALITATIVE, ["eagle3"], "step_weighted")
    assert table.title == "Acceptance length by domain (SPEED-Bench qualitative)"
    lines = _body(to_markdown(table))
    assert lines[:2] == ["| Domain | AL (step-weighted) | AL (official) |", "|---|---:|---:|"]
    # these summaries have no requests.jsonl: the official figure is n/a, never guessed
    assert all(line.endswith((" n/a |", " **n/a** |")) for line in lines[2:])
    body = [line.replace(" **n/a** |", "").replace(" n/a |", "") for line in lines]
    assert body[2:] == [
        "| Coding | 3.33 |",
        "| Math | 3.17 |",
        "| RAG | 3.14 |",
        "| Multilingual | 3.07 |",
        "| Reasoning | 2.91 |",
        "| Summarization | 2.88 |",
        "| STEM | 2.84 |",
        "| Humanities | 2.70 |",
        "| QA | 2.55 |",
        "| Writing | 2.33 |",
        "| Roleplay | 2.02 |",
        "| **Overall** | **2.81** |",
    ]
    data = table.data.set_index(C.CATEGORY)
    # Coding pools steps over three cells: 1 + 420/180, not the mean 3.344 of the three ALs.
    assert data.loc["coding", C.ACCEPTANCE_LENGTH] == pytest.approx(1 + 420 / 180)
    # Overall pools counters over the 4 qualitative cells: 1 + 12670/7000 = 2.81
    # (the mean of the four cell ALs would be 2.799).
    assert data.loc[D.OVERALL, C.ACCEPTANCE_LENGTH] == pytest.approx(1 + 12670 / 7000)
    per_domain, overall = table.footnotes[-2:]
    assert "Official AL" in table.footnotes[0] and "n/a" in table.footnotes[1]
    assert "step-weighted" in per_domain and "per-request metrics" in per_domain
    assert "3 cells (concurrency 1, 48; 2 repeats)" in per_domain
    assert "spec-decode counters" in overall and "not an average of ALs" in overall
    assert "4 cells (concurrency 1, 2, 48; 2 repeats)" in overall


def test_al_by_domain_side_by_side_for_two_drafts(tmp_path: Path) -> None:
    write_manifest(tmp_path, ["baseline"], ["eagle3", "ngram"])
    cats = {"coding": (3.0, 2.0), "writing": (2.0, 1.5)}
    for label, index in (("eagle3", 0), ("ngram", 1)):
        per_category = {name: category(values[index], 10) for name, values in cats.items()}
        write_cell(
            tmp_path,
            summary(
                label=label, dataset=QUALITATIVE, concurrency=4, per_category=per_category,
                spec=spec_decode(100, [60, 40, 20] if index == 0 else [30, 10, 5]),
            ),
        )  # fmt: skip
    cells, _ = L.load_cells([tmp_path])
    table = T.al_by_domain(F.cells_frame(cells), F.category_frame(cells), QUALITATIVE,
                           ["eagle3", "ngram"], "step_weighted")  # fmt: skip
    assert table.columns == (
        "Domain",
        "eagle3 AL (step-weighted)",
        "eagle3 AL (official)",
        "ngram AL (step-weighted)",
        "ngram AL (official)",
    )
    assert table.rows == (
        ("Coding", "3.00", "n/a", "2.00", "n/a"),
        ("Writing", "2.00", "n/a", "1.50", "n/a"),
        ("Overall", "2.20", "n/a", "1.45", "n/a"),
    )


def test_al_by_context(loaded: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    frame, _ = loaded
    table = T.al_by_context(frame, ["eagle3"])
    assert table.columns == (
        "Context length",
        "Mean input tokens",
        "AL (official)",
        "AL (step-weighted)",
    )
    # Every fixture cell holds 500 prompt tokens per successful request.
    assert table.rows == (("1K", "500", "n/a", "2.71"), ("8K", "500", "n/a", "2.72"))
    table = T.al_by_context(frame, ["eagle3"], "step_weighted")
    assert table.rows == (("1K", "500", "2.71", "n/a"), ("8K", "500", "2.72", "n/a"))


def test_al_by_context_absent_is_reported_not_raised_as_error(tmp_path: Path) -> None:
    write_cell(
        tmp_path,
        summary(label="eagle3", dataset=QUALITATIVE, concurrency=1, spec=spec_decode(10, [5])),
    )
    frame = F.load_results([tmp_path])
    with pytest.raises(T.TableUnavailable, match="no throughput split"):
        T.al_by_context(frame, ["eagle3"])


def test_serving_table_reproduces_the_card(loaded: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    frame, _ = loaded
    table = T.serving(frame, EAGLE, QUALITATIVE, 48)
    assert table.title == "Serving results at concurrency 48, SPEED-Bench (qualitative)"
    assert _body(to_markdown(table))[2:] == [
        "| Output throughput/GPU | 415.2 tok/s | 281.7 tok/s | 1.47× |",
        "| Median E2E latency | 9.68 s | 13.15 s | 1.36× faster |",
        "| Median TTFT | 154 ms | 130 ms | +18.5% latency |",
        "| Interactivity | 50.0 tok/s/user | 50.0 tok/s/user | 1.00× |",
    ]
    data = table.data.set_index(D.METRIC)
    # The cells hold 415.0 and 415.4, 150 and 158 ms: the table shows their means.
    assert data.loc[C.OUTPUT_TOK_S_PER_GPU, D.SPECULATIVE] == pytest.approx(415.2)
    assert data.loc[C.TTFT_MS_MEDIAN, D.SPECULATIVE] == pytest.approx(154.0)
    assert data.loc[C.OUTPUT_TOK_S_PER_GPU, D.RATIO] == pytest.approx(415.2 / 281.7)
    assert data.loc[C.OUTPUT_TOK_S_PER_GPU, "speculative_min"] == pytest.approx(415.0)
    assert data.loc[C.OUTPUT_TOK_S_PER_GPU, D.N_SPECULATIVE] == 2
    assert "415.0–415.4 tok/s" in " ".join(table.footnotes)


def test_serving_change_uses_unrounded_values(tmp_path: Path) -> None:
    write_manifest(tmp_path, ["baseline"], ["eagle3"])
    write_cell(tmp_path, summary(label="baseline", dataset=QUALITATIVE, concurrency=8,
                                 tok_s_per_gpu=9.96, ttft_ms=129.6))  # fmt: skip
    write_cell(tmp_path, summary(label="eagle3", dataset=QUALITATIVE, concurrency=8,
                                 tok_s_per_gpu=10.44, ttft_ms=130.4,
                                 spec=spec_decode(10, [5])))  # fmt: skip
    table = T.serving(F.load_results([tmp_path]), EAGLE, QUALITATIVE, 8)
    throughput, _, ttft = table.rows[:3]
    assert throughput == ("Output throughput/GPU", "10.4 tok/s", "10.0 tok/s", "1.05×")
    # Both print as 130 ms, yet 130.4 / 129.6 is +0.6%.
    assert ttft == ("Median TTFT", "130 ms", "130 ms", "+0.6% latency")


def test_concurrency_sweep(loaded: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    frame, _ = loaded
    table = T.concurrency_sweep(frame, EAGLE, QUALITATIVE)
    assert table.columns == ("Concurrency", "eagle3 tok/s/GPU", "baseline tok/s/GPU", "Speedup")
    assert table.rows == (
        ("1", "29.0", "16.0", "1.81×"),
        ("2", "55.0", "32.0", "1.72×"),
        ("48", "415.2", "281.7", "1.47×"),
    )


def test_acceptance_summary_reproduces_the_gqa_card(tmp_path: Path) -> None:
    # MT-Bench: 16680 accepted over 10000 drafts and 29990 draft tokens.
    write_cell(tmp_path, summary(label="eagle3", dataset="mt-bench", concurrency=16,
                                 spec=spec_decode(10000, [7446, 5368, 3866], 29990)))  # fmt: skip
    write_cell(tmp_path, summary(label="eagle3", dataset=QUALITATIVE, concurrency=16,
                                 spec=spec_decode(10000, [7190, 5000, 3420], 29996)))  # fmt: skip
    table = T.acceptance_summary(F.load_results([tmp_path]), ["eagle3"])
    lines = _body(to_markdown(table))
    assert lines[:2] == [
        "| Dataset | n | Mean accepted length (step-weighted) | Draft accept rate | "
        "Per-position accept rate (pos 1 / 2 / 3) |",
        "|---|---:|---:|---:|---:|",
    ]
    assert sorted(lines[2:]) == [
        "| MT-Bench | 64 | 2.668 | 55.62% | 0.745 / 0.537 / 0.387 |",
        "| SPEED-Bench (qualitative) | 64 | 2.561 | 52.04% | 0.719 / 0.500 / 0.342 |",
    ]
    # The card's own definition, said beside its layout: not the official AL.
    assert (
        "the GQA card's layout and definition, not the official SPEED-Bench AL"
        in (table.footnotes[0])
    )


def test_acceptance_summary_pools_repeats(loaded: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    frame, _ = loaded
    table = T.acceptance_summary(frame, ["eagle3"])
    # n counts prompts (64), as the GQA card does; the footnote says what was pooled
    assert table.rows[0] == (
        "SPEED-Bench (qualitative)", "64", "2.810", "60.33%", "0.821 / 0.587 / 0.401",
    )  # fmt: skip
    assert "256 turns pooled over 4 cells" in " ".join(table.footnotes)


def test_acceptance_summary_n_counts_prompts_not_turns(tmp_path: Path) -> None:
    # MT-Bench on the GQA card: 80 prompts × 2 turns is n = 80, not 160.
    write_cell(tmp_path, summary(label="eagle3", dataset="mt-bench", concurrency=16,
                                 num_requests=160, num_conversations=80,
                                 spec=spec_decode(10000, [7446, 5368, 3866], 29990)))  # fmt: skip
    table = T.acceptance_summary(F.load_results([tmp_path]), ["eagle3"])
    assert table.rows[0][:2] == ("MT-Bench", "80")
    assert "160 turns pooled over 1 cell" in " ".join(table.footnotes)


def test_selection_from_manifest_and_errors(loaded: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    frame, _ = loaded
    selection = select_labels(frame)
    assert selection.comparisons == (EAGLE,)
    with pytest.raises(SpecbenchError, match=r"--baseline 'vanilla' is not a label"):
        select_labels(frame, baseline="vanilla")
    with pytest.raises(SpecbenchError, match=r"--concurrency 64 was not run \(.*1, 2, 48\)"):
        check_concurrency(frame, 64)
    assert pick_concurrency([1, 2, 48, 64], None) == 48
    assert pick_concurrency([1, 2, 32], None) == 32
    assert pick_concurrency([1, 2, 32], 2) == 2


def test_baseline_inferred_without_manifest_and_none_when_every_label_speculates(
    tmp_path: Path,
) -> None:
    write_cell(tmp_path / "a", summary(label="vanilla", dataset=QUALITATIVE, concurrency=1))
    write_cell(tmp_path / "a", summary(label="eagle3", dataset=QUALITATIVE, concurrency=1,
                                       spec=spec_decode(10, [5])))  # fmt: skip
    selection = select_labels(F.load_results([tmp_path / "a"]))
    assert selection.comparisons == (Comparison("eagle3", "vanilla"),)
    write_cell(tmp_path / "b", summary(label="eagle3", dataset=QUALITATIVE, concurrency=1,
                                       spec=spec_decode(10, [5])))  # fmt: skip
    write_cell(tmp_path / "b", summary(label="ngram", dataset=QUALITATIVE, concurrency=1,
                                       spec=spec_decode(10, [2])))  # fmt: skip
    # Both speculate and none is marked baseline: both are reported, with no speedup.
    unpaired = select_labels(F.load_results([tmp_path / "b"]))
    assert unpaired.speculative == ("eagle3", "ngram") and unpaired.comparisons == ()
    assert unpaired.baseline_note is not None
    assert "no baseline for a speedup" in unpaired.baseline_note
    assert "--baseline NAME" in unpaired.baseline_note
    chosen = select_labels(F.load_results([tmp_path / "b"]), baseline="ngram")
    assert chosen.comparisons == (Comparison("eagle3", "ngram"),)


def test_merged_directories_compare_within_each_directory(tmp_path: Path) -> None:
    for name, tok in (("vllm-0.31", 300.0), ("vllm-0.32", 330.0)):
        write_manifest(tmp_path / name, ["baseline"], ["eagle3"])
        write_cell(tmp_path / name, summary(label="baseline", dataset=QUALITATIVE,
                                            concurrency=4, tok_s_per_gpu=200.0))  # fmt: skip
        eagle = summary(label="eagle3", dataset=QUALITATIVE, concurrency=4, tok_s_per_gpu=tok,
                        spec=spec_decode(10, [5]))  # fmt: skip
        write_cell(tmp_path / name, eagle)
    frame = F.load_results([tmp_path / "vllm-0.31", tmp_path / "vllm-0.32"])
    selection = select_labels(frame)
    assert selection.comparisons == (
        Comparison("vllm-0.31/eagle3", "vllm-0.31/baseline"),
        Comparison("vllm-0.32/eagle3", "vllm-0.32/baseline"),
    )
    rows = [T.serving(frame, c, QUALITATIVE, 4).rows[0][3] for c in selection.comparisons]
    assert rows == ["1.50×", "1.65×"]


def test_al_by_domain_from_single_category_runs(tmp_path: Path) -> None:
    # One cell per category, no per_category and no mixed run: the counters give each
    # category, and Overall pools every step: 1 + (30 + 10) / (10 + 20) = 2.333.
    for name, spec in (
        ("coding", spec_decode(10, [10, 10, 10])),
        ("writing", spec_decode(20, [10, 0, 0])),
    ):
        cell = summary(label="eagle3", dataset=QUALITATIVE, concurrency=4, category=name, spec=spec)
        write_cell(tmp_path, cell, slug=f"speed-bench-qualitative-{name}")
    cells, _ = L.load_cells([tmp_path])
    frame, categories = F.cells_frame(cells), F.category_frame(cells)
    table = T.al_by_domain(frame, categories, QUALITATIVE, ["eagle3"], "step_weighted")
    assert table.rows == (
        ("Coding", "4.00", "n/a"),
        ("Writing", "1.50", "n/a"),
        ("Overall", "2.33", "n/a"),
    )
    assert any("single-category runs" in note for note in table.footnotes)


def test_mean_input_tokens_are_pooled_over_requests_not_cells(tmp_path: Path) -> None:
    tput = "speed-bench:throughput_8k"
    for repeat, (requests, tokens) in enumerate([(10, 8_000), (30, 276_000)]):
        write_cell(
            tmp_path,
            summary(label="eagle3", dataset=tput, concurrency=4, repeat=repeat,
                    num_requests=requests, input_tokens=tokens,
                    spec=spec_decode(10, [5])),
        )  # fmt: skip
    table = T.al_by_context(F.load_results([tmp_path]), ["eagle3"])
    # (8,000 + 276,000) / 40 requests = 7,100, not the mean of 800 and 9,200 (5,000).
    assert table.rows == (("8K", "7,100", "n/a", "1.50"),)


def test_throughput_without_a_gpu_count_is_per_server_and_says_so(tmp_path: Path) -> None:
    write_manifest(tmp_path, ["baseline"], ["eagle3"])
    for label, tok in (("baseline", 100.0), ("eagle3", 150.0)):
        cell = summary(label=label, dataset=QUALITATIVE, concurrency=8, gpus=1,
                       tok_s_per_gpu=tok,
                       spec=spec_decode(10, [5]) if label == "eagle3" else None)  # fmt: skip
        write_cell(tmp_path, cell.model_copy(update={"gpus": None, "output_tok_s_per_gpu": None}))
    frame = F.load_results([tmp_path])
    assert D.throughput_column(frame, ["eagle3", "baseline"]) == C.OUTPUT_TOK_S
    table = T.serving(frame, EAGLE, QUALITATIVE, 8)
    assert table.rows[0] == ("Output throughput per server", "150.0 tok/s", "100.0 tok/s", "1.50×")
    assert T.PER_SERVER_NOTE in table.footnotes
    sweep = T.concurrency_sweep(frame, EAGLE, QUALITATIVE)
    assert sweep.columns[1:3] == ("eagle3 tok/s per server", "baseline tok/s per server")
    assert sweep.title.startswith("Output throughput per server vs concurrency")


def test_one_side_without_gpus_makes_both_sides_per_server(tmp_path: Path) -> None:
    write_manifest(tmp_path, ["baseline"], ["eagle3"])
    write_cell(tmp_path, summary(label="baseline", dataset=QUALITATIVE, concurrency=8,
                                 gpus=8, tok_s_per_gpu=100.0))  # fmt: skip
    spec = summary(label="eagle3", dataset=QUALITATIVE, concurrency=8, gpus=1,
                   tok_s_per_gpu=1200.0, spec=spec_decode(10, [5]))  # fmt: skip
    write_cell(tmp_path, spec.model_copy(update={"gpus": None, "output_tok_s_per_gpu": None}))
    table = T.serving(F.load_results([tmp_path]), EAGLE, QUALITATIVE, 8)
    # 1,200 tok/s per server against the baseline's 8 × 100: never 1,200 against 100.
    assert table.rows[0] == (
        "Output throughput per server",
        "1,200.0 tok/s",
        "800.0 tok/s",
        "1.50×",
    )
