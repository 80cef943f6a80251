"""A suite's data folder applied to a dataset spec.

`with_data_dir` maps a `speed-bench:CONFIG` spec without a path to the folder
`data prepare` wrote (`speed-bench:CONFIG:DIR`). Loading and validating every dataset a
run uses (missing files, placeholders, partial configs) is the run's preflight
(`run.preflight.load_plan_workload`), for `run` and `run --dry-run` alike.
"""

from __future__ import annotations

from pathlib import Path


def with_data_dir(spec: str, data_dir: str | Path | None) -> str:
    """`speed-bench:CONFIG` → `speed-bench:CONFIG:DIR` when `data_dir` is set; else unchanged."""
    if not data_dir:
        return spec
    parts = spec.strip().split(":")
    if parts[0] == "speed-bench" and len(parts) == 2 and parts[1]:
        return f"{spec.strip()}:{data_dir}"
    return spec
