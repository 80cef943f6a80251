"""Capacity under an SLO: the bounds parsed (and refused, with their exact lines), the keys
derived from the declared latency figures, and capacity computed by hand: interpolated
between c = 4 and c = 16, measured at a bound reached exactly, none, and ≥ max measured."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from specbench.advise.slo import (
    AT_LEAST,
    BASIS,
    CAPACITY,
    INTERPOLATED,
    LIMITED_BY,
    MEASURED,
    NONE,
    Bound,
    capacity_data,
    capacity_table,
    parse_slo,
    slo_from_table,
    slo_keys,
)
from specbench.common.errors import SpecbenchError

SLO = parse_slo("tpot_p90=50ms,ttft_p90=2s")

# config → [(concurrency, tpot p90 ms, ttft p90 ms, tok/s/GPU)]
SERIES = {
    # tpot breaks at 16 (60 > 50) and so does ttft (2600 > 2000); tpot reaches 50 first:
    # c = 4 + (50 − 30) / (60 − 30) × 12 = 12 (ttft would at 4 + 1800 / 2400 × 12 = 13).
    "eagle3-k2": [(1, 20, 100, 50), (4, 30, 200, 150), (16, 60, 2600, 400), (64, 90, 5000, 600)],
    "eagle3-k4": [(1, 70, 100, 80), (4, 80, 200, 200)],  # breaks tpot at c = 1
    "baseline": [(1, 10, 100, 40), (4, 12, 300, 120), (16, 20, 900, 280)],  # meets all
    "eagle3-k1": [(1, 40, 100, 60), (4, 50, 150, 170), (16, 70, 300, 350)],  # 50 at c = 4
}


def frame() -> pd.DataFrame:
    rows = []
    for label, points in SERIES.items():
        for c, tpot, ttft, tok in points:
            row = {
                "label": label,
                "view": "chat",
                "workload": "chat",
                "category": None,
                "concurrency": c,
                "tpot_ms_p90": float(tpot),
                "ttft_ms_p90": float(ttft),
                "output_tok_s_per_gpu": float(tok),
            }
            if label == "eagle3-k2" and c in (4, 16):
                low, high = {4: (140.0, 160.0), 16: (380.0, 420.0)}[c]
                row |= {"output_tok_s_per_gpu_ci_low": low, "output_tok_s_per_gpu_ci_high": high}
            rows.append(row)
    return pd.DataFrame(rows)


def test_the_keys_come_from_the_declared_latency_distributions() -> None:
    keys = slo_keys()
    assert keys[:4] == ("ttft_mean", "ttft_median", "ttft_p90", "ttft_p99")
    assert {"tpot_p90", "e2e_p99", "step_gap_median"} <= set(keys)
    assert len(keys) == 16  # ttft, tpot, e2e, step_gap × mean, median, p90, p99


def test_bounds_parse_with_their_units() -> None:
    assert SLO.bounds == (Bound("tpot_p90", 50.0, "50ms"), Bound("ttft_p90", 2000.0, "2s"))
    assert SLO.bounds[0].column == "tpot_ms_p90"
    assert SLO.describe() == "tpot_p90 ≤ 50ms, ttft_p90 ≤ 2s"
    table = slo_from_table({"e2e_median": "1.5s", "tpot_p99": "80 ms"}, "suite.toml: slo")
    assert [(b.key, b.limit_ms) for b in table.bounds] == [
        ("e2e_median", 1500.0),
        ("tpot_p99", 80.0),
    ]


KEYS = ", ".join(slo_keys())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "ttft_p90=2",
            "--slo: ttft_p90=2 has no unit; allowed units: ms, s "
            "(write ttft_p90=2ms or ttft_p90=2s)",
        ),
        ("tpot_p90=0ms", "--slo: tpot_p90=0ms: a bound must be positive"),
        ("tpot_p90=-5ms", "--slo: tpot_p90=-5ms: a bound must be positive"),
        ("tpot_p90=5min", "--slo: tpot_p90=5min: unit 'min'; allowed units: ms, s"),
        (
            "tpot_p90=fast",
            "--slo: tpot_p90='fast' is not a duration; write a positive number and its unit, "
            "ms or s (e.g. tpot_p90=50ms)",
        ),
        ("tpot_p90=50ms,tpot_p90=60ms", "--slo: tpot_p90 is bounded twice; give each key once"),
        (
            "tpot_p90",
            "--slo: 'tpot_p90' is not KEY=VALUE; write e.g. tpot_p90=50ms,ttft_p90=2s "
            f"(keys: {KEYS})",
        ),
        ("itl_p90=50ms", f"--slo: unknown SLO key 'itl_p90'; allowed: {KEYS}"),
        ("tpot_p95=50ms", f"--slo: unknown SLO key 'tpot_p95'; allowed: {KEYS}"),
    ],
)
def test_bad_bounds_are_one_line_naming_the_key_and_what_is_allowed(
    text: str, message: str
) -> None:
    with pytest.raises(SpecbenchError) as raised:
        parse_slo(text)
    assert str(raised.value) == message


def test_a_suite_table_value_without_a_unit_is_refused_naming_the_file() -> None:
    with pytest.raises(SpecbenchError) as raised:
        slo_from_table({"tpot_p90": 50}, "suite.toml: slo")
    assert str(raised.value) == (
        "suite.toml: slo: tpot_p90=50 has no unit; allowed units: ms, s "
        "(write tpot_p90=50ms or tpot_p90=50s)"
    )


def test_capacity_interpolated_measured_none_and_at_least_max() -> None:
    data = capacity_data(frame(), SLO).set_index("label")
    k2 = data.loc["eagle3-k2"]
    assert k2[BASIS] == INTERPOLATED
    assert k2[CAPACITY] == pytest.approx(12.0)
    # 150 + (400 − 150) × (12 − 4) / (16 − 4), and its interval's bounds the same way
    assert k2["output_tok_s_per_gpu"] == pytest.approx(950 / 3)
    assert k2["output_tok_s_per_gpu_ci_low"] == pytest.approx(300.0)
    assert k2["output_tok_s_per_gpu_ci_high"] == pytest.approx(1000 / 3)
    assert k2[LIMITED_BY] == "tpot_p90"
    assert data.loc["eagle3-k4", BASIS] == NONE
    assert math.isnan(data.loc["eagle3-k4", CAPACITY])
    assert data.loc["baseline", BASIS] == AT_LEAST
    assert (data.loc["baseline", CAPACITY], data.loc["baseline", "output_tok_s_per_gpu"]) == (
        16,
        280,
    )
    assert data.loc["eagle3-k1", BASIS] == MEASURED
    assert (data.loc["eagle3-k1", CAPACITY], data.loc["eagle3-k1", "output_tok_s_per_gpu"]) == (
        4,
        170,
    )
    # The best under the SLO: the highest tok/s/GPU at capacity (k2's 316.7 > baseline's 280).
    assert list(data.index[data["best_under_slo"]]) == ["eagle3-k2"]


def test_the_capacity_table_prints_each_basis_and_bolds_the_best() -> None:
    table = capacity_table(frame(), SLO, {"chat": "chat"})
    assert table.columns == (
        "Config",
        "Capacity (concurrency)",
        "Output tok/s/GPU at capacity",
        "Limited by",
    )
    assert table.rows == (
        ("baseline", "≥ 16 (max measured)", "280.0", "—"),
        ("eagle3-k1", "4 (measured)", "170.0", "tpot_p90"),
        ("eagle3-k2", "12.0 (interpolated)", "316.7 (300.0–333.3)", "tpot_p90"),
        ("eagle3-k4", "none (c=1 breaks it)", "—", "—"),
    )
    assert table.bold_rows == frozenset({2})
    assert table.footnotes[0].startswith("SLO (--slo): tpot_p90 ≤ 50ms, ttft_p90 ≤ 2s.")
    assert table.footnotes[1] == (
        "Best under the SLO (highest throughput at capacity, in bold): eagle3-k2."
    )
