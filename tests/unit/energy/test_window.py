"""`energy_summary`: every reason code, and a valid window's figures computed by hand."""

from __future__ import annotations

import pytest

from specbench.energy.log import LogError, LogHeader, LogReading, LogRecord
from specbench.energy.reading import GpuReading
from specbench.energy.window import energy_summary

HEADER = LogHeader(source="nvml", source_detail="auto: nvml reads GPU(s) 0, 1", gpus=["0", "1"])


def reading(kind: str, t_s: float, **gpus: tuple[float | None, float | None]) -> LogReading:
    """`gpus` as g0=(energy_j, power_w), g1=…"""
    return LogReading(
        kind=kind,  # type: ignore[arg-type]
        t_s=t_s,
        gpus={
            name[1:]: GpuReading(gpu=name[1:], energy_j=energy, power_w=power)
            for name, (energy, power) in gpus.items()
        },
    )


def window(after_gpu0_j: float = 1630.0) -> list[LogRecord]:
    """Two GPUs over 2 s. GPU 0: counter 1000 J → `after_gpu0_j`, power 200, 400, 400,
    200 W at t = 0, 0.5, 1, 2 s: ∫ = 150 + 200 + 300 = 650 J. GPU 1: 2000 → 2200 J at a
    steady 100 W: ∫ = 200 J. Sampled: 850 J."""
    return [
        HEADER,
        reading("before", 0.0, g0=(1000.0, 200.0), g1=(2000.0, 100.0)),
        reading("sample", 0.5, g0=(1100.0, 400.0), g1=(2050.0, 100.0)),
        reading("sample", 1.0, g0=(1250.0, 400.0), g1=(2100.0, 100.0)),
        reading("after", 2.0, g0=(after_gpu0_j, 200.0), g1=(2200.0, 100.0)),
    ]


def test_a_valid_window_gives_its_figures() -> None:
    summary = energy_summary(window(), output_tokens=4150)
    assert summary.valid is True and summary.reason is None and summary.detail is None
    assert summary.source == "nvml" and summary.gpus == ["0", "1"]
    assert summary.definition == "gpu_board_energy"
    assert summary.window_s == 2.0
    assert summary.per_gpu_joules == {"0": 630.0, "1": 200.0}
    assert summary.joules == 830.0
    assert summary.output_tokens == 4150
    assert summary.joules_per_output_token == pytest.approx(0.2)
    assert summary.output_tokens_per_joule == pytest.approx(5.0)
    assert summary.mean_power_w_per_gpu == pytest.approx(207.5)  # 830 / 2 s / 2 GPUs
    assert summary.samples == 2 and summary.sample_errors == 0
    assert summary.sampled_joules == pytest.approx(850.0)
    assert summary.counter_power_agree is True  # |830 − 850| = 20 ≤ 42.5


@pytest.mark.parametrize(
    ("after_gpu0_j", "joules", "agree"),
    [
        (1692.0, 892.0, True),  # 42 J above 850: inside 5% (42.5 J)
        (1693.0, 893.0, False),  # 43 J above
        (1608.0, 808.0, True),  # 42 J below
        (1607.0, 807.0, False),  # 43 J below
    ],
)
def test_counter_and_power_agree_within_five_percent_either_way(
    after_gpu0_j: float, joules: float, agree: bool
) -> None:
    summary = energy_summary(window(after_gpu0_j), output_tokens=100)
    assert summary.joules == joules
    assert summary.counter_power_agree is agree
    assert summary.valid is True  # the cross-check informs; it does not invalidate


def test_telemetry_off_gives_no_figures() -> None:
    off = LogHeader(source="off", source_detail='gpu_telemetry = "off" in the suite', gpus=[])
    summary = energy_summary([off], output_tokens=4150)
    assert (summary.valid, summary.reason) == (False, "off")
    assert summary.detail == 'gpu_telemetry = "off" in the suite'
    assert summary.source == "off"
    assert summary.joules is None and summary.window_s is None
    assert summary.mean_power_w_per_gpu is None and summary.joules_per_output_token is None
    assert summary.output_tokens == 4150


@pytest.mark.parametrize("edge", ["before", "after"])
def test_a_failed_edge_read_gives_its_reason(edge: str) -> None:
    failure = LogError(
        edge=edge,  # type: ignore[arg-type]
        t_s=2.0,
        reason="unreachable",
        message="http://n:5000/metrics could not be read (timeout 2 s): [Errno 111] refused",
    )
    records = [r for r in window() if getattr(r, "kind", None) != edge] + [failure]
    summary = energy_summary(records, output_tokens=4150)
    assert (summary.valid, summary.reason) == (False, "unreachable")
    assert summary.detail == (
        f"the {edge} read failed: http://n:5000/metrics could not be read (timeout 2 s): "
        "[Errno 111] refused"
    )
    assert summary.joules is None and summary.window_s is None


def test_a_gpu_absent_from_an_edge_is_gpu_missing() -> None:
    records = window()
    records[-1] = reading("after", 2.0, g0=(1630.0, 200.0))
    summary = energy_summary(records, output_tokens=4150)
    assert (summary.valid, summary.reason) == (False, "gpu_missing")
    assert summary.detail == "GPU 1 is absent from the after reading (it lists 0)"
    assert summary.joules is None and summary.mean_power_w_per_gpu is None
    # power × time over the readings that have it: GPU 1 only up to its 1 s sample (100 J)
    assert summary.sampled_joules == pytest.approx(750.0)
    assert summary.counter_power_agree is None
    assert summary.window_s == 2.0


def test_power_only_is_no_energy_counter_with_the_sampled_joules_kept() -> None:
    records = window()
    records[1] = reading("before", 0.0, g0=(None, 200.0), g1=(2000.0, 100.0))
    summary = energy_summary(records, output_tokens=4150)
    assert (summary.valid, summary.reason) == (False, "no_energy_counter")
    assert summary.detail == "the source gives no energy counter for GPU 0 (its before reading)"
    assert summary.joules is None and summary.joules_per_output_token is None
    assert summary.sampled_joules == pytest.approx(850.0)


@pytest.mark.parametrize(
    ("fallen_to", "reason"),
    [(100.0, "counter_reset"), (1090.0, "counter_backwards")],
)
def test_a_counter_that_falls_is_reset_below_a_tenth_else_backwards(
    fallen_to: float, reason: str
) -> None:
    records = window()
    records[3] = reading("sample", 1.0, g0=(fallen_to, 400.0), g1=(2100.0, 100.0))
    summary = energy_summary(records, output_tokens=4150)
    assert (summary.valid, summary.reason) == (False, reason)
    assert summary.detail == (
        f"GPU 0's energy counter fell from 1100.000 J to {fallen_to:.3f} J at t = 1.000 s"
    )
    assert summary.joules is None


def test_a_counter_still_over_a_second_is_frozen() -> None:
    records = window()
    records[-1] = reading("after", 2.0, g0=(1630.0, 200.0), g1=(2000.0, 100.0))
    records[2] = reading("sample", 0.5, g0=(1100.0, 400.0), g1=(2000.0, 100.0))
    records[3] = reading("sample", 1.0, g0=(1250.0, 400.0), g1=(2000.0, 100.0))
    summary = energy_summary(records, output_tokens=4150)
    assert (summary.valid, summary.reason) == (False, "counter_frozen")
    assert summary.detail == (
        "GPU 1's energy counter stayed at 2000.000 J from t = 0.000 s to 1.000 s (window 2.000 s)"
    )
    assert summary.joules is None


def test_a_counter_that_stops_mid_window_is_frozen_though_its_edges_differ() -> None:
    records = window()
    # GPU 0 moves to 1100 J by 0.5 s, then stays there to the after read at 2.0 s.
    records[2] = reading("sample", 0.5, g0=(1100.0, 400.0), g1=(2100.0, 100.0))
    records[3] = reading("sample", 1.0, g0=(1100.0, 400.0), g1=(2150.0, 100.0))
    records[-1] = reading("after", 2.0, g0=(1100.0, 400.0), g1=(2250.0, 100.0))
    summary = energy_summary(records, output_tokens=4150)
    assert (summary.valid, summary.reason) == (False, "counter_frozen")
    assert summary.detail == (
        "GPU 0's energy counter stayed at 1100.000 J from t = 0.500 s to 2.000 s (window 2.000 s)"
    )


def test_under_a_second_one_still_counter_is_allowed_but_all_still_gives_no_joules() -> None:
    one_still = [
        HEADER,
        reading("before", 0.0, g0=(1000.0, 200.0), g1=(2000.0, 100.0)),
        reading("after", 0.5, g0=(1100.0, 200.0), g1=(2000.0, 100.0)),
    ]
    summary = energy_summary(one_still, output_tokens=50)
    assert summary.valid is True and summary.joules == 100.0
    all_still = [*one_still[:2], reading("after", 0.5, g0=(1000.0, 200.0), g1=(2000.0, 100.0))]
    summary = energy_summary(all_still, output_tokens=50)
    assert (summary.valid, summary.reason) == (False, "counter_frozen")
    assert summary.detail == "no counted GPU's energy counter moved over 0.500 s"
    assert summary.joules is None and summary.output_tokens_per_joule is None


@pytest.mark.parametrize("tokens", [None, 0])
def test_no_output_tokens_keeps_joules_and_power_but_no_per_token_figure(
    tokens: int | None,
) -> None:
    summary = energy_summary(window(), output_tokens=tokens)
    assert (summary.valid, summary.reason) == (False, "no_output_tokens")
    assert summary.detail == (
        f"Δ vllm:generation_tokens_total over the window is {'absent' if tokens is None else 0}: "
        "nothing to divide the joules by"
    )
    assert summary.joules == 830.0
    assert summary.mean_power_w_per_gpu == pytest.approx(207.5)
    assert summary.joules_per_output_token is None and summary.output_tokens_per_joule is None
    assert summary.counter_power_agree is True


def test_a_failed_sample_mid_window_does_not_invalidate_it() -> None:
    records = window()
    records[3] = LogError(edge="sample", t_s=1.0, reason="unreachable", message="timed out")
    summary = energy_summary(records, output_tokens=4150)
    assert summary.valid is True and summary.joules == 830.0
    assert summary.samples == 1 and summary.sample_errors == 1
    # GPU 0 without its 1 s sample: 0.5 × (200 + 400) / 2 + 1.5 × (400 + 200) / 2 = 600 J
    assert summary.sampled_joules == pytest.approx(800.0)


def test_samples_outside_the_window_are_left_out_and_order_is_by_time() -> None:
    records = window()
    late = reading("sample", 2.4, g0=(1700.0, 900.0), g1=(2300.0, 900.0))
    summary = energy_summary([records[0], records[3], late, *records[1:3], records[4]], 4150)
    assert summary.samples == 2
    assert summary.sampled_joules == pytest.approx(850.0)
    assert summary.valid is True


def test_power_in_fewer_than_two_readings_gives_no_sampled_joules() -> None:
    records = [
        HEADER,
        reading("before", 0.0, g0=(1000.0, None), g1=(2000.0, 100.0)),
        reading("after", 2.0, g0=(1630.0, 200.0), g1=(2200.0, 100.0)),
    ]
    summary = energy_summary(records, output_tokens=4150)
    assert summary.valid is True and summary.joules == 830.0
    assert summary.sampled_joules is None and summary.counter_power_agree is None


def test_records_no_writer_produces_raise() -> None:
    with pytest.raises(ValueError, match="no header line"):
        energy_summary(window()[1:], output_tokens=1)
    with pytest.raises(ValueError, match="never negative"):
        energy_summary(window(), output_tokens=-1)
    backwards = [
        HEADER,
        reading("before", 2.0, g0=(1.0, 1.0)),
        reading("after", 2.0, g0=(2.0, 1.0)),
    ]
    with pytest.raises(ValueError, match="is not after the before read"):
        energy_summary(backwards, output_tokens=1)
