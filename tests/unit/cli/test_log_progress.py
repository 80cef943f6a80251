"""The log-line progress of a campaign whose stderr is not a terminal."""

from __future__ import annotations

import pytest

from specbench.cli.log_progress import duration, heartbeat_interval


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.4, "0 s"), (42.4, "42 s"), (59.6, "1m00s"), (185, "3m05s"), (7620, "2h07m")],
)
def test_a_duration_is_short_and_exact_enough_for_an_eta(seconds: float, text: str) -> None:
    assert duration(seconds) == text


@pytest.mark.parametrize(("value", "seconds"), [("5", 5.0), ("0", 60.0), ("x", 60.0), ("", 60.0)])
def test_the_heartbeat_interval_is_a_positive_number_or_a_minute(
    monkeypatch: pytest.MonkeyPatch, value: str, seconds: float
) -> None:
    monkeypatch.setenv("SPECBENCH_HEARTBEAT_S", value)
    assert heartbeat_interval() == seconds
