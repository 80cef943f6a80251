"""The baseline file: a results directory's per-cell metrics with their spread and provenance.

Meant to be committed to the user's repository (`baselines/NAME.json`), so it is
self-describing and versioned: `schema_version`, `created_at` (UTC), the specbench version
that wrote it, the source results directory, the suite's identity (name, hash, and the
path-independent workload fingerprint the gate compares) and a summary of each server's
provenance (engine, vLLM version, speculative config, command).

Version 2 adds, per cell, its server launches (`launches`) and, per figure of a cell
measured on several launches, the value of each launch (`launch_values`), which the
launch-level rule compares. A version-1 file (no launches) still loads: each of its cells
reads as one launch, so the gate judges it by the within-launch rule.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import Field, ValidationError

from specbench import __version__, store
from specbench.common.errors import SpecbenchError
from specbench.common.model import Frozen
from specbench.common.naming import selection_key
from specbench.common.validation import describe_validation_error
from specbench.gate.snapshot import CellStats, Snapshot, snapshot
from specbench.store.manifest import Manifest, read_manifest
from specbench.suite.model import WorkloadSpec, workload_keys

#: Version of the baseline file format; bump on any incompatible change. 2: launches.
BASELINE_SCHEMA_VERSION = 2
#: Versions this specbench reads (1: before launches, read as one launch per cell).
READABLE_VERSIONS = (1, 2)
BASELINE_KIND: Literal["specbench-baseline"] = "specbench-baseline"


class SuiteIdentity(Frozen):
    """Which suite produced the results, from the results manifest."""

    name: str | None = Field(description="Suite name; None for `specbench bench` results.")
    suite_hash: str | None = Field(description="sha256 of the whole resolved suite.")
    workloads: list[dict[str, Any]] = Field(
        description="What was measured, path-independent: dataset folder, selection, "
        "prompts, concurrency, max_tokens, temperature, warmup, max_model_len."
    )
    workloads_hash: str | None = Field(
        description="sha256 of `workloads`: equal means the same measurement."
    )


class Baseline(Frozen):
    """A saved baseline: what `specbench gate` compares new results against."""

    kind: Literal["specbench-baseline"] = Field(
        default=BASELINE_KIND, description="Marks the file as a specbench baseline."
    )
    schema_version: int = Field(description="Baseline format version.")
    created_at: str = Field(description="UTC ISO-8601 time the baseline was saved.")
    specbench_version: str = Field(description="specbench version that saved it.")
    source_results_dir: str = Field(description="Results directory it was built from.")
    results_created_at: str | None = Field(description="The manifest's created_at.")
    git_sha: str | None = Field(description="specbench commit that produced the results.")
    suite: SuiteIdentity = Field(description="Suite identity from the manifest.")
    servers: dict[str, dict[str, Any]] = Field(
        description="Server name → provenance summary (engine, vllm_version, gpus, "
        "speculative, command, config)."
    )
    cells: dict[str, CellStats] = Field(description="Cell key → metrics over repeats.")


def workload_fingerprint(manifest: Manifest | None) -> list[dict[str, Any]]:
    """The suite's workloads without absolute paths: what must match for a fair comparison."""
    suite = manifest.suite if manifest else None
    if not suite:
        return []
    workloads = suite.get("workloads") or []
    try:
        keys = workload_keys([WorkloadSpec.model_validate(w) for w in workloads])
    except (ValidationError, ValueError):  # a suite written by another specbench version
        keys = [
            selection_key(w["dataset"], w.get("categories") or (), w.get("entropy_tiers") or ())
            for w in workloads
        ]
    return [
        {
            "dataset_dir": key,
            "num_prompts": workload.get("num_prompts"),
            "concurrency": workload.get("concurrency"),
            "max_tokens": workload.get("max_tokens"),
            "temperature": workload.get("temperature"),
            "warmup": workload.get("warmup"),
            "max_model_len": workload.get("max_model_len"),
        }
        for key, workload in zip(keys, workloads, strict=True)
    ]


def suite_identity(manifest: Manifest | None) -> SuiteIdentity:
    suite = manifest.suite if manifest else None
    workloads = workload_fingerprint(manifest)
    digest = (
        hashlib.sha256(orjson.dumps(workloads, option=orjson.OPT_SORT_KEYS)).hexdigest()
        if workloads
        else None
    )
    return SuiteIdentity(
        name=suite.get("name") if suite else None,
        suite_hash=manifest.suite_hash if manifest else None,
        workloads=workloads,
        workloads_hash=digest,
    )


def server_summaries(manifest: Manifest | None) -> dict[str, dict[str, Any]]:
    """Per server: the provenance fields a reviewer needs, not the whole GPU inventory."""
    if manifest is None:
        return {}
    suite_servers = (manifest.suite or {}).get("servers") or {}
    result: dict[str, dict[str, Any]] = {}
    for name, server in sorted(manifest.servers.items()):
        provenance = server.provenance or {}
        config = provenance.get("config") or suite_servers.get(name)
        inventory = provenance.get("gpu_inventory") or {}
        result[name] = {
            "baseline": server.baseline,
            "engine": server.engine or provenance.get("engine"),
            "vllm_version": server.vllm_version or provenance.get("vllm_version"),
            "gpus": server.gpus,
            "model": server.model or (config or {}).get("model"),
            "speculative": (config or {}).get("speculative"),
            "command": provenance.get("command"),
            "gpu_tool": inventory.get("tool"),
            "config": config,
        }
    return result


def build_baseline(results_dir: Path, data: Snapshot | None = None) -> Baseline:
    """The baseline of a results directory (its snapshot plus manifest provenance)."""
    manifest = read_manifest(results_dir)
    data = data if data is not None else snapshot(results_dir)
    if data.failed_cells:
        key, reason = next(iter(data.failed_cells.items()))
        raise SpecbenchError(
            f"{results_dir}: cell {key} failed ({reason}); a baseline needs every cell "
            "measured: rerun it (specbench run resumes) before saving"
        )
    return Baseline(
        schema_version=BASELINE_SCHEMA_VERSION,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        specbench_version=__version__,
        source_results_dir=str(Path(results_dir).resolve()),
        results_created_at=manifest.created_at if manifest else None,
        git_sha=manifest.git_sha if manifest else None,
        suite=suite_identity(manifest),
        servers=server_summaries(manifest),
        cells=data.cells,
    )


def save_baseline(results_dir: Path, out: Path) -> Baseline:
    """Build the baseline of `results_dir` and write it atomically to `out`."""
    baseline = build_baseline(Path(results_dir))
    store.write_atomic(Path(out), baseline.model_dump_json(indent=2) + "\n")
    return baseline


def load_baseline(path: Path) -> Baseline:
    """Read a baseline file; a foreign file or another schema version is a SpecbenchError."""
    raw = store.read_json(Path(path))
    if raw.get("kind") != BASELINE_KIND:
        raise SpecbenchError(
            f"{path}: not a specbench baseline (kind {raw.get('kind')!r}); "
            "create one with `specbench baseline save RESULTS_DIR --out FILE`"
        )
    version = raw.get("schema_version")
    if version not in READABLE_VERSIONS:
        readable = " and ".join(map(str, READABLE_VERSIONS))
        raise SpecbenchError(
            f"{path}: baseline schema_version {version!r} is not supported (this specbench "
            f"reads {readable}); save the baseline again with this version"
        )
    try:
        return Baseline.model_validate(raw)
    except ValidationError as error:
        detail = describe_validation_error(error, Baseline, "", path).removeprefix(f"{path}: ")
        raise SpecbenchError(f"{path}: invalid baseline ({detail})") from None
