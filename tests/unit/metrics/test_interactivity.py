"""Interactivity (1000 / median TPOT): its formula, and every use its declaration gives it.

Real values from the recorded emulator run `tests/fixtures/runs/resume-7b6eecf` (median
TPOT 0.985 ms at baseline c1, 1.083 ms at c4, 0 at eagle3 c4: every turn's tokens came in
its first chunk there).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from specbench.analysis import tables as T
from specbench.client.record import RequestRecord
from specbench.gate.rules import DEFAULT_RULES, GateRules
from specbench.gate.snapshot import snapshot
from specbench.measure.precision import Interval, bootstrap_intervals, precise_enough
from specbench.metrics.declarations import INTERACTIVITY, serving_rows, targeted
from specbench.metrics.directions import direction_of
from specbench.metrics.latency import interactivity_tok_s_per_user, tpot_ms
from specbench.render.markdown import to_markdown
from specbench.results import columns as C
from specbench.results.frame import load_results
from specbench.results.selection import Comparison

RUN = Path(__file__).resolve().parents[2] / "fixtures" / "runs" / "resume-7b6eecf" / "results"
NAME = "interactivity_tok_s_per_user"


def _summary(cell: str) -> dict:
    return json.loads((RUN / cell / "r0" / "summary.json").read_text())


def test_interactivity_is_1000_over_the_median_tpot():
    assert interactivity_tok_s_per_user(20.0) == 50.0  # 20 ms per token: 50 tok/s/user
    assert interactivity_tok_s_per_user(0.5) == 2000.0
    assert interactivity_tok_s_per_user(0.0) is None  # no decode time to divide by
    with pytest.raises(ValueError, match="median TPOT"):
        interactivity_tok_s_per_user(-1.0)
    with pytest.raises(ValueError, match="median TPOT"):
        interactivity_tok_s_per_user(math.nan)


def test_the_declaration_makes_it_a_higher_is_better_serving_gated_targeted_figure():
    assert direction_of(NAME) == "higher"
    # The card's fourth row, after tok/s/GPU, E2E and TTFT (energy, where measured, follows).
    assert [f.name for f in serving_rows()][3] == NAME
    assert [f.name for f in targeted()][-1] == NAME
    rule = DEFAULT_RULES[NAME]
    assert rule.direction == "higher" and rule.describe() == "-5%" and rule.noise
    # A rules file may name it like any other stored figure.
    rules = GateRules.model_validate({"metrics": {NAME: {"direction": "higher", "relative": 0.1}}})
    assert rules.effective()[NAME].relative == 0.1


def test_the_results_frame_derives_it_per_repeat():
    frame = load_results([RUN]).set_index([C.LABEL, C.CONCURRENCY])
    assert frame.loc[("baseline", 1), NAME] == pytest.approx(1000 / 0.9852791999999999)
    assert frame.loc[("baseline", 4), NAME] == pytest.approx(923.7106169820378)
    assert math.isnan(frame.loc[("eagle3", 4), NAME])  # median TPOT 0: n/a, not infinite


def test_the_serving_table_shows_it_with_its_ratio():
    frame = load_results([RUN])
    view = str(frame[C.VIEW].iloc[0])
    table = T.serving(frame, Comparison(speculative="eagle3", baseline="baseline"), view, 1)
    assert table.rows[3] == ("Interactivity", "9,504.9 tok/s/user", "1,014.9 tok/s/user", "9.36×")
    at_c4 = T.serving(frame, Comparison(speculative="eagle3", baseline="baseline"), view, 4)
    assert "| Interactivity | — | 923.7 tok/s/user | n/a |" in to_markdown(at_c4)


def test_the_gate_stores_it_with_the_error_propagated_from_the_median_tpot():
    cell = snapshot(RUN).cells["baseline/tiny/c1"].metrics[NAME]
    tpot = 0.9852791999999999
    se_tpot = _summary("baseline/tiny/c1")["standard_errors"]["figures"]["tpot_ms_median"]
    assert cell.value == pytest.approx(1000 / tpot)
    # delta method: |d(1000/x)/dx| × se = 1000 / x² × se
    assert cell.se == pytest.approx(1000 / tpot**2 * se_tpot, rel=1e-6)
    assert cell.se == pytest.approx(169.368, rel=1e-4)
    assert INTERACTIVITY.derived is not None
    assert INTERACTIVITY.derived.standard_error(20.0, 1.0) == pytest.approx(2.5)
    assert INTERACTIVITY.derived.standard_error(0.0, 1.0) is None


def test_a_precision_target_bootstraps_it_from_the_per_turn_tpot():
    lines = (RUN / "baseline/tiny/c1/r0/requests.jsonl").read_text().splitlines()
    records = [RequestRecord.from_dict(json.loads(line)) for line in lines if line.strip()]
    intervals = bootstrap_intervals(records, 1, seed=0)
    found = intervals[NAME]
    turns = [
        value
        for r in records
        if r.ok and r.ttft_ms is not None and r.e2e_ms is not None and r.output_tokens
        if (value := tpot_ms(r.e2e_ms, r.ttft_ms, r.output_tokens)) is not None
    ]
    assert found.value == pytest.approx(1000 / float(np.median(turns)))
    assert found.value == pytest.approx(1000 / _summary("baseline/tiny/c1")["tpot_ms"]["median"])
    assert found.low < found.value < found.high
    # A cell only stops when this figure is precise too.
    others = {name: Interval(100.0, 99.9, 100.1) for name in intervals if name != NAME}
    assert precise_enough(others, 0.01) is False
    assert precise_enough({**others, NAME: Interval(50.0, 49.9, 50.1)}, 0.01) is True
