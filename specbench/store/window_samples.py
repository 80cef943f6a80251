"""`window_samples.jsonl`: the scheduler's gauges as polled through a cell's window.

One JSON line per `/metrics` poll, appended as each arrives, so a crash keeps what was
seen: `{"t_s": 0.251, "num_requests_running": 16, "num_requests_waiting": 0}`, `t_s` the
seconds since the window's start (the midpoint of the poll's request and answer), a gauge
null when the server did not expose it. The cell's `running_batch_mean` is a pure
function of this file (`metrics.load.running_batch`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from specbench.common.errors import SpecbenchError
from specbench.store.files import LineWriter


@dataclass(frozen=True, slots=True)
class WindowSample:
    """One poll: when, and the requests running and waiting (None: gauge absent)."""

    t_s: float
    num_requests_running: int | None
    num_requests_waiting: int | None


class WindowSampleWriter(LineWriter):
    """Appends samples to `window_samples.jsonl`, one flushed line each (`LineWriter`)."""

    def write(self, sample: WindowSample) -> None:
        self.append(orjson.dumps(sample) + b"\n")


def read_window_samples(path: Path) -> list[WindowSample]:
    """The samples of a `window_samples.jsonl`, tolerating a truncated last line (a crash)."""
    lines = path.read_bytes().split(b"\n")
    samples = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            samples.append(WindowSample(**orjson.loads(line)))
        except (orjson.JSONDecodeError, TypeError) as error:
            if number >= len(lines) - 1:
                break  # the last line was cut short by a crash: ignore it
            raise SpecbenchError(f"{path}:{number}: not a window sample ({error})") from None
    return samples
