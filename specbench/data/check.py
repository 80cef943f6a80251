"""A dataset spec checked as `run` would load it, and a suite's data folder applied to it.

`with_data_dir` maps a `speed-bench:CONFIG` spec without a path to the folder
`data prepare` wrote (`speed-bench:CONFIG:DIR`); `check_dataset_loads` loads and validates
a spec (missing files, placeholders, partial configs) and raises one line otherwise, for
`run --dry-run` and the run's preflight.
"""

from __future__ import annotations

from pathlib import Path

from specbench.data import speed_bench
from specbench.data.loader import read_dataset


def with_data_dir(spec: str, data_dir: str | Path | None) -> str:
    """`speed-bench:CONFIG` → `speed-bench:CONFIG:DIR` when `data_dir` is set; else unchanged."""
    if not data_dir:
        return spec
    parts = spec.strip().split(":")
    if parts[0] == "speed-bench" and len(parts) == 2 and parts[1]:
        return f"{spec.strip()}:{data_dir}"
    return spec


def check_dataset_loads(
    spec: str, data_dir: str | Path | None = None, revision: str | None = None
) -> None:
    """Load every row `spec` names and refuse what `run` would refuse, in one line (exit 2)."""
    raw = read_dataset(with_data_dir(spec, data_dir), revision=revision)
    if raw.is_speed_bench and raw.config is not None:
        speed_bench.check_no_placeholders(raw.conversations, raw.config, raw.source)
