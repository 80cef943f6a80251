"""Card tables print the official SPEED-Bench AL first, the step-weighted one beside it.

On the recorded real-vLLM run (schema 1, written before the official figure existed) the
official AL is recomputed from `requests.jsonl`; without that file it is n/a with the reason.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from specbench.analysis import tables as T
from specbench.client.record import RequestRecord
from specbench.measure.summarize import category_acceptance
from specbench.results import columns as C
from specbench.results import frame as F
from specbench.results import loading as L
from specbench.results.columns import MERGED_CHUNKS, OFFICIAL_ACCEPTANCE_LENGTH

RUN = Path(__file__).resolve().parents[2] / "fixtures" / "runs" / "tiny-vllm-ngram"
CELL = Path("ngram") / "lossless-prompts" / "c1" / "r0"


def _table(results: Path, definition: str = "official") -> T.Table:
    cells, _ = L.load_cells([results])
    frame, categories = F.cells_frame(cells), F.category_frame(cells)
    group = str(frame[C.GROUP].iloc[0])
    return T.al_by_domain(frame, categories, group, ["ngram"], definition)


def test_older_results_get_the_official_figure_recomputed() -> None:
    table = _table(RUN)
    assert table.columns == ("Domain", "AL (official)", "AL (step-weighted)")
    # 4 questions; chunks per turn from requests.jsonl (prefill chunk counted):
    # the run merged chunks (6-token chunks with K + 1 = 4), so it is marked an estimate
    assert table.rows[-1] == ("Overall", "≈2.40", "2.30")
    # by hand from requests.jsonl (24 tokens per turn): q-loop 24/10, q-story 24/11,
    # q-sum (24 + 24)/(13 + 17) pooled over its two turns, q-list 24/7
    official = table.data.set_index(C.CATEGORY)[OFFICIAL_ACCEPTANCE_LENGTH]
    assert official["coding"] == pytest.approx((24 / 10 + 24 / 7) / 2)
    assert official["math"] == pytest.approx(48 / 30)
    assert official["overall"] == pytest.approx((24 / 10 + 24 / 11 + 48 / 30 + 24 / 7) / 4)
    assert table.rows[0] == ("Coding", "≈2.91", "2.57")
    notes = " ".join(table.footnotes)
    assert "recomputed from requests.jsonl" in notes
    assert "mean over 4 (cell, question) pairs" in notes and "merged chunks seen" in notes
    cells, _ = L.load_cells([RUN])
    frame = F.cells_frame(cells)
    ngram = frame[frame[C.LABEL] == "ngram"].iloc[0]
    assert ngram[MERGED_CHUNKS] == 6  # six 6-token chunks (K + 1 = 4)
    flipped = _table(RUN, "step_weighted")
    assert flipped.columns == ("Domain", "AL (step-weighted)", "AL (official)")
    assert flipped.rows[-1] == ("Overall", "2.30", "≈2.40")


def test_without_records_the_official_figure_is_na_with_its_reason(tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(RUN, copy)
    (copy / CELL / "requests.jsonl").unlink()
    table = _table(copy)
    assert all(row[1] == "n/a" for row in table.rows)
    assert table.rows[-1][2] == "2.30"
    assert any("official AL n/a" in note and "requests.jsonl is missing" in note
               for note in table.footnotes)  # fmt: skip


def test_server_without_per_request_metrics(tmp_path: Path) -> None:
    # The same recorded cell as a server without --per-request-spec-decode-metrics saves it.
    copy = tmp_path / "run"
    shutil.copytree(RUN, copy)
    cell = copy / CELL
    records = [json.loads(line) for line in (cell / "requests.jsonl").read_text().splitlines()]
    for record in records:
        record["spec_decode"] = None
    (cell / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    summary = json.loads((cell / "summary.json").read_text())
    loaded = [RequestRecord.from_dict(r) for r in records]
    summary["per_category"] = {
        name: value.model_dump(mode="json")
        for name, value in category_acceptance(loaded, speculating=True).items()
    }
    (cell / "summary.json").write_text(json.dumps(summary))
    table = _table(copy)
    # official from chunks; the step-weighted column has no per-domain figure (n/a), only
    # the counters' Overall; the tokens-per-chunk fallback is never printed under that name
    assert table.rows == (
        ("Coding", "2.91", "n/a"),
        ("Writing", "2.18", "n/a"),
        ("Math", "1.60", "n/a"),
        ("Overall", "2.40", "2.30"),
    )
    notes = " ".join(table.footnotes)
    assert "Merged chunks could not be checked" in notes
    assert "--per-request-spec-decode-metrics" in notes


def test_only_categories_with_merged_chunks_are_marked_estimates() -> None:
    # The recorded specbench run on specdec_bench's setup: EAGLE3 merged chunks only in one
    # summarization turn (tests/fixtures/runs/README.md).
    run = RUN.parent / "specdec-parity"
    cells, _ = L.load_cells([run])
    frame, categories = F.cells_frame(cells), F.category_frame(cells)
    group = str(frame[C.GROUP].iloc[0])
    table = T.al_by_domain(frame, categories, group, ["eagle3"])
    assert table.rows == (
        ("Coding", "1.52", "1.22"),
        ("Math", "1.22", "1.20"),
        ("Summarization", "≈1.21", "1.20"),
        ("Writing", "1.21", "1.17"),
        ("Overall", "≈1.29", "1.20"),
    )
    assert "2 merged chunks seen" in " ".join(table.footnotes)
