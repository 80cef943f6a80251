"""`energy.jsonl`: a cell's raw energy readings, append-only, one JSON object a line.

The first line is the header (`kind` "header": the source, why it was chosen, the GPUs
counted); then each reading (`kind` "before", "sample" or "after"; `t_s` seconds since the
before read; per GPU `energy_j` and `power_w`, null where the source gives none) and each
failed read (`kind` "error" with its `edge`, `reason` and `message`). Each line is flushed
as it is written, so a cell cut short keeps what it read. A cell with telemetry off holds
the header alone, with source "off". `window.energy_summary` turns the records into the
cell's `energy` object; nothing else is needed to recompute it.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO, get_args

from specbench.common.errors import SpecbenchError
from specbench.energy.reading import GpuReading, Reading, ReasonCode

Edge = Literal["before", "sample", "after"]
EDGES: tuple[Edge, ...] = get_args(Edge)
REASONS: tuple[str, ...] = get_args(ReasonCode)


@dataclass(frozen=True, slots=True)
class LogHeader:
    """The first line: where the readings come from and which GPUs are counted."""

    source: str
    source_detail: str | None
    gpus: list[str]


@dataclass(frozen=True, slots=True)
class LogReading:
    """One reading of every GPU the source listed, `t_s` after the before read."""

    kind: Edge
    t_s: float
    gpus: dict[str, GpuReading]


@dataclass(frozen=True, slots=True)
class LogError:
    """A read that failed: at an edge of the window, or a sample between them."""

    edge: Edge
    t_s: float
    reason: ReasonCode
    message: str


LogRecord = LogHeader | LogReading | LogError


class EnergyLogWriter:
    """Appends records to one `energy.jsonl`; safe to call from the sampler's thread and the
    window's edges at once. Times become seconds since the first timed record (the before
    read, or its failed attempt)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.origin_s: float | None = None
        self.file: TextIO = path.open("a", encoding="utf-8")

    def header(self, source: str, source_detail: str | None, gpus: list[str]) -> None:
        """The first line."""
        self.write(
            {"kind": "header", "source": source, "source_detail": source_detail, "gpus": list(gpus)}
        )

    def reading(self, kind: Edge, reading: Reading) -> None:
        """A before, sample or after reading."""
        gpus = {
            gpu: {"energy_j": r.energy_j, "power_w": r.power_w} for gpu, r in reading.gpus.items()
        }
        self.write({"kind": kind, "t_s": self.since_origin(reading.at_s), "gpus": gpus})

    def error(self, edge: Edge, at_s: float, reason: ReasonCode, message: str) -> None:
        """A failed read at `at_s` (`time.perf_counter()` seconds)."""
        self.write(
            {
                "kind": "error",
                "edge": edge,
                "t_s": self.since_origin(at_s),
                "reason": reason,
                "message": message,
            }
        )

    def since_origin(self, at_s: float) -> float:
        with self.lock:
            if self.origin_s is None:
                self.origin_s = at_s
            return round(at_s - self.origin_s, 6)

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, allow_nan=False) + "\n"
        with self.lock:
            self.file.write(line)
            self.file.flush()

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self.lock:
            self.file.close()


def parse_record(data: Any) -> LogRecord:
    """One decoded line as its typed record; ValueError naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("a line must be a JSON object")
    kind = data.get("kind")
    if kind == "header":
        return LogHeader(
            source=str(data["source"]),
            source_detail=data.get("source_detail"),
            gpus=[str(g) for g in data["gpus"]],
        )
    if kind in EDGES:
        gpus = {
            str(gpu): GpuReading(
                gpu=str(gpu),
                energy_j=optional_float(v["energy_j"]),
                power_w=optional_float(v["power_w"]),
            )
            for gpu, v in data["gpus"].items()
        }
        return LogReading(kind=kind, t_s=float(data["t_s"]), gpus=gpus)
    if kind == "error":
        if data["edge"] not in EDGES or data["reason"] not in REASONS:
            raise ValueError(f"unknown edge {data['edge']!r} or reason {data['reason']!r}")
        return LogError(
            edge=data["edge"],
            t_s=float(data["t_s"]),
            reason=data["reason"],
            message=str(data["message"]),
        )
    raise ValueError(f"unknown kind {kind!r}")


def optional_float(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{value!r} is not a number")
    return float(value)


def read_energy_log(path: Path) -> list[LogRecord]:
    """Every record of `path`, in file order.

    A last line cut short (no newline, not JSON: the writer was killed mid-line) is left
    out; any other bad line raises SpecbenchError naming the file and line.
    """
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    records: list[LogRecord] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(parse_record(json.loads(line)))
        except json.JSONDecodeError as error:
            if number == len(lines):
                break
            raise SpecbenchError(f"{path}:{number}: not JSON ({error})") from error
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise SpecbenchError(f"{path}:{number}: not an energy record ({error})") from error
    return records
