"""Where a results directory came from, as report tables: servers, workloads, the suite.

From the manifest only, as recorded (argv and environment are stored with secrets
redacted; nothing here un-redacts or re-reads the environment). A workload whose rows came
from a prepared data folder shows that folder's `prepared.json` (`data prepare`) when the
folder is still there, and the rows `data prepare --skip-gated` left out of it (a workload
with `accept_partial`). A directory without a manifest, or with an unreadable one, gives no
tables and one line saying why.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specbench.analysis.table import Table
from specbench.common.errors import SpecbenchError
from specbench.data.prepared import find_manifest, left_out_rows
from specbench.store.manifest import Manifest, read_manifest


@dataclass(frozen=True, slots=True)
class Provenance:
    """One results directory's provenance tables, and what could not be read."""

    results_dir: Path
    tables: tuple[Table, ...] = ()
    prepared: tuple[tuple[str, str], ...] = ()  # (workload, prepared.json text)
    left_out: tuple[str, ...] = ()  # rows `data prepare --skip-gated` left out, per workload
    notes: tuple[str, ...] = field(default=())


def _text(value: Any) -> str:
    return "n/a" if value is None or value == "" else str(value)


def _frame(rows: Sequence[dict[str, Any]]) -> Any:
    import pandas as pd

    return pd.DataFrame(list(rows))


def _servers(manifest: Manifest) -> Table:
    records = []
    for name, server in sorted(manifest.servers.items()):
        recorded = server.provenance or {}
        argv = recorded.get("argv")
        env = recorded.get("env") or {}
        inventory = recorded.get("gpu_inventory") or {}
        records.append(
            {
                "server": name,
                "role": "baseline"
                if server.baseline
                else "speculative"
                if server.speculative
                else "target"
                if server.speculative is False
                else "unknown",
                "engine": server.engine,
                "vllm_version": server.vllm_version or recorded.get("vllm_version"),
                "gpus": server.gpus,
                "model": server.model,
                "command": shlex.join(argv) if argv else recorded.get("command"),
                "env": " ".join(f"{k}={v}" for k, v in sorted(env.items())),
                "gpu_product": inventory.get("product"),
                "vram_mib": inventory.get("vram_mib"),
                "driver": inventory.get("driver"),
                "rocm_version": inventory.get("rocm_version"),
                "cuda_version": inventory.get("cuda_version"),
                # Old manifests recorded the command (`amd-smi list`); unchecked starts say so.
                "gpu_inventory": inventory.get("tool") or _unchecked(recorded.get("gpu_check")),
            }
        )
    columns = (
        "Server",
        "Role",
        "Engine",
        "vLLM",
        "GPUs",
        "Model",
        "Command (redacted)",
        "Environment (redacted)",
        "GPU",
        "VRAM per GPU (MiB)",
        "Driver",
        "ROCm",
        "CUDA",
        "GPU inventory",
    )
    rows = tuple(tuple(_text(r[k]) for k in r) for r in records)
    return Table(
        name="provenance_servers",
        title="Servers",
        columns=columns,
        rows=rows,
        data=_frame(records),
        align=tuple("right" if column.startswith("VRAM") else "left" for column in columns),
        footnotes=(
            "Command and environment as the manifest recorded them at the last start, "
            "secret values redacted (`launch.provenance`).",
            "GPU, VRAM, driver and ROCm/CUDA as the tool under GPU inventory listed them "
            "before that start (`launch.gpus`: amd-smi, else rocm-smi, else nvidia-smi); "
            "unchecked: no tool answered and --gpus-unchecked started it anyway.",
        ),
    )


def _unchecked(check: Any) -> str | None:
    """`unchecked` for a start no GPU tool answered for (`gpu_check` says so), else None."""
    return "unchecked" if isinstance(check, str) and check.startswith("unchecked") else None


def _prepared(source: str | None) -> Path | None:
    """The prepared folder's `prepared.json`, when the dataset came from one still on disk."""
    return find_manifest(Path(source)) if source else None


def _manifest_text(path: Path) -> str:
    try:
        return json.dumps(json.loads(path.read_text()), indent=2, ensure_ascii=False)
    except (OSError, ValueError):
        return f"{path}: unreadable"


def _left_out(key: str, spec: dict[str, Any], manifest: Path) -> list[str]:
    """`KEY: N rows left out (REASON)` per reason, for a config prepared with --skip-gated."""
    kind, _, rest = str(spec.get("dataset") or "").partition(":")
    config = rest.partition(":")[0] if kind == "speed-bench" else ""
    found = left_out_rows(manifest, config) if config else {}
    return [f"{key}: {count} rows left out ({reason})" for reason, count in found.items()]


def _workloads(manifest: Manifest) -> tuple[Table, tuple[tuple[str, str], ...], tuple[str, ...]]:
    records: list[dict[str, Any]] = []
    prepared: list[tuple[str, str]] = []
    left_out: list[str] = []
    for key, workload in sorted(manifest.workloads.items()):
        path = _prepared(workload.dataset_source)
        if path is not None:
            prepared.append((key, _manifest_text(path)))
            left_out += _left_out(key, workload.spec, path)
        records.append(
            {
                "workload": key,
                "dataset": workload.spec.get("dataset"),
                "dataset_source": workload.dataset_source,
                "dataset_revision": workload.dataset_revision,
                "num_conversations": workload.num_conversations,
                "prepared_manifest": "below" if path is not None else "none",
            }
        )
    table = Table(
        name="provenance_workloads",
        title="Workloads",
        columns=("Workload", "Dataset", "Source", "Revision", "Conversations", "prepared.json"),
        rows=tuple(tuple(_text(r[k]) for k in r) for r in records),
        data=_frame(records),
        align=("left", "left", "left", "left", "right", "left"),
    )
    return table, tuple(prepared), tuple(left_out)


def _suite(manifest: Manifest) -> Table:
    runs = manifest.runs
    records: list[dict[str, Any]] = [
        {"field": "suite hash", "value": manifest.suite_hash},
        {"field": "schema version", "value": manifest.schema_version},
        {"field": "converted from schema", "value": manifest.converted_from},
        {"field": "specbench", "value": manifest.specbench_version},
        {"field": "git commit", "value": manifest.git_sha},
        {"field": "python", "value": manifest.python},
        {"field": "created", "value": manifest.created_at},
        {"field": "runs", "value": len(runs)},
        {"field": "last run", "value": " ".join(runs[-1].argv) if runs else None},
        {"field": "host", "value": runs[-1].host if runs else None},
    ]
    return Table(
        name="provenance_suite",
        title="Suite and specbench",
        columns=("Field", "Value"),
        rows=tuple((str(r["field"]), _text(r["value"])) for r in records),
        data=_frame(records),
        align=("left", "left"),
    )


def provenance(results_dir: Path) -> Provenance:
    """The provenance tables of one results directory (never raises on a bad manifest)."""
    try:
        manifest = read_manifest(results_dir)
    except SpecbenchError as error:
        return Provenance(results_dir, notes=(f"manifest unreadable: {error}",))
    if manifest is None:
        return Provenance(results_dir, notes=(f"{results_dir}: no manifest.json",))
    workloads, prepared, left_out = _workloads(manifest)
    notes = () if prepared else ("no prepared-data manifest (prepared.json) for any workload",)
    return Provenance(
        results_dir,
        tables=(_suite(manifest), _servers(manifest), workloads),
        prepared=prepared,
        left_out=left_out,
        notes=notes,
    )
