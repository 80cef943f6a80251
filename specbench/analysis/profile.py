"""`specbench export profile`: a versioned speculation profile per speculative config.

Simulators and system benchmarks force a realistic acceptance from such a profile (vLLM's
synthetic acceptance, InferenceX/ATOM "golden" AL): per workload, per category and
overall, K, the AL in both definitions, the marginal and conditional per-position
acceptance, the acceptance histogram, the thinking/answer and output-position splits,
and where every number came from. See docs/speculation-profile.md.

Everything is recomputed from the saved raw files with the run's own pure functions:
per-request `metrics.speculative_decoding` objects (histograms) from `requests.jsonl`,
the counters' deltas from `summary.json`, and the cuts (`measure.cuts`) from the records.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from specbench import __version__, store
from specbench.client.record import RequestRecord
from specbench.common.errors import SpecbenchError
from specbench.common.naming import slug
from specbench.measure.cuts import group_cuts, num_spec_tokens_of
from specbench.metrics.acceptance import (
    acceptance_length,
    conditional_acceptance,
    draft_acceptance_rate,
    per_position_from_histogram,
)
from specbench.metrics.cuts import DEFAULT_BIN_TOKENS
from specbench.results.loading import LoadedCell, load_cells
from specbench.store.layout import cell_key
from specbench.store.manifest import read_manifest

PROFILE_FORMAT = "specbench.speculation_profile"
PROFILE_VERSION = 1
OVERALL = "overall"


def _histogram_profile(records: Sequence[RequestRecord], k: int) -> dict[str, Any]:
    """Acceptance from vLLM's per-request objects pooled over `records` (step-weighted)."""
    objects = [r.spec_decode for r in records if r.spec_decode]
    if not objects:
        return {"refusal": "the server sent no per-request metrics (start vLLM with "
                "--per-request-spec-decode-metrics summary or detailed)"}  # fmt: skip
    if len(objects) < len(records):
        return {"refusal": f"{len(records) - len(objects)} of {len(records)} requests have no "
                "per-request metrics"}  # fmt: skip
    histogram = [0] * (k + 1)
    drafted = 0
    for spec in objects:
        for j, count in enumerate(spec.get("acceptance_histogram") or ()):
            if j > k:
                raise SpecbenchError(f"an acceptance histogram is longer than K + 1 = {k + 1}")
            histogram[j] += int(count)
        drafted += int(spec["num_draft_tokens"])
    steps = sum(histogram)
    accepted = sum(j * count for j, count in enumerate(histogram))
    marginal = per_position_from_histogram(histogram) or []
    return {
        "source": "per_request_metrics",
        "num_spec_steps": steps,
        "num_accepted_tokens": accepted,
        "num_draft_tokens": drafted,
        "acceptance_length_step_weighted": acceptance_length(accepted, steps),
        "draft_acceptance_rate": draft_acceptance_rate(accepted, drafted),
        "marginal_acceptance": marginal,
        "conditional_acceptance": conditional_acceptance(marginal),
        "acceptance_histogram": histogram,
        "acceptance_histogram_fraction": [c / steps for c in histogram] if steps else None,
    }


def _counter_profile(cells: Sequence[LoadedCell]) -> dict[str, Any] | None:
    """The overall acceptance from the `/metrics` counter deltas, pooled over cells."""
    found = [c.summary.spec_decode for c in cells if c.summary.spec_decode]
    if not found:
        return None
    drafts = sum(s.num_drafts for s in found)
    accepted = sum(s.num_accepted_tokens for s in found)
    width = min(len(s.num_accepted_tokens_per_position) for s in found)
    per_position = [sum(s.num_accepted_tokens_per_position[i] for s in found) for i in range(width)]
    marginal = [count / drafts for count in per_position] if drafts else []
    return {
        "source": "server_counters",
        "num_drafts": drafts,
        "acceptance_length_step_weighted": acceptance_length(accepted, drafts),
        "draft_acceptance_rate": draft_acceptance_rate(
            accepted, sum(s.num_draft_tokens for s in found)
        ),
        "marginal_acceptance": marginal,
        "conditional_acceptance": conditional_acceptance(marginal),
    }


def _official(cells: Sequence[LoadedCell], category: str | None) -> dict[str, Any]:
    """The official SPEED-Bench AL, question-weighted over cells, from the summaries."""
    values: list[tuple[float, int]] = []
    for cell in cells:
        summary = cell.summary
        if category is None:
            cell_value = summary.official_acceptance
            if cell_value is not None and cell_value.acceptance_length is not None:
                values.append((cell_value.acceptance_length, cell_value.num_questions))
        else:
            found = summary.per_category.get(category)
            if found is not None and found.official_acceptance_length is not None:
                values.append((found.official_acceptance_length, found.num_questions or 1))
    if not values:
        return {"acceptance_length": None, "refusal": "no official AL in these summaries"}
    questions = sum(n for _, n in values)
    return {
        "acceptance_length": sum(v * n for v, n in values) / questions,
        "num_questions": questions,
        "definition": "official: per question Σ tokens / Σ chunks over its turns, mean over "
        "questions (NVIDIA specdec_bench); pooled over cells weighted by questions",
    }


def _cuts(records: Sequence[RequestRecord], k: int, max_tokens: int) -> dict[str, Any]:
    group = group_cuts(records, k, max_tokens, DEFAULT_BIN_TOKENS)
    if group.refusal is not None:
        return {"refusal": group.refusal}
    result: dict[str, Any] = {
        "source": group.source,
        "is_estimate": group.is_estimate,
        "bin_tokens": DEFAULT_BIN_TOKENS,
        "position_bins": [b.model_dump() for b in group.position_bins or ()],
    }
    if group.thinking is None or group.answer is None:
        result["thinking_answer"] = {"refusal": group.thinking_refusal}
    else:
        result["thinking_answer"] = {
            "thinking": group.thinking.model_dump(),
            "answer": group.answer.model_dump(),
            "num_requests_with_span": group.num_requests_with_span,
            "thinking_tokens": group.thinking_tokens,
            "answer_tokens": group.answer_tokens,
        }
    return result


def _group(
    records: Sequence[RequestRecord],
    cells: Sequence[LoadedCell],
    k: int,
    max_tokens: int,
    category: str | None,
) -> dict[str, Any]:
    profile: dict[str, Any] = {
        "num_requests": len(records),
        "num_spec_tokens": k,
        "acceptance": _histogram_profile(records, k),
        "official": _official(cells, category),
        "cuts": _cuts(records, k, max_tokens),
    }
    if category is None:
        profile["server_counters"] = _counter_profile(cells)
    return profile


def _read(cells: Sequence[LoadedCell]) -> list[RequestRecord]:
    records: list[RequestRecord] = []
    for cell in cells:
        path = cell.path.parent / store.REQUESTS
        if not path.is_file():
            raise SpecbenchError(f"{path}: missing (a profile is computed from request records)")
        records += [r for r in store.read_records(path) if r.ok]
    return records


def build_profiles(results_dir: Path) -> dict[str, dict[str, Any]]:
    """Speculative config label → its profile (see the module docstring)."""
    cells, _ = load_cells([results_dir])
    manifest = read_manifest(results_dir)
    by_label: dict[str, list[LoadedCell]] = defaultdict(list)
    for cell in cells:
        if cell.summary.spec_decode is not None:
            by_label[cell.label].append(cell)
    if not by_label:
        raise SpecbenchError(
            f"{results_dir}: no speculative cell (no summary.json with spec-decode counters)"
        )
    suite_servers = ((manifest.suite or {}).get("servers") or {}) if manifest else {}
    profiles: dict[str, dict[str, Any]] = {}
    for label, label_cells in sorted(by_label.items()):
        server = manifest.servers.get(label) if manifest else None
        workloads: dict[str, Any] = {}
        by_workload: dict[str, list[LoadedCell]] = defaultdict(list)
        for cell in label_cells:
            by_workload[cell.summary.workload].append(cell)
        for workload, group in sorted(by_workload.items()):
            group.sort(key=lambda c: (c.summary.concurrency, c.summary.launch, c.summary.repeat))
            records = _read(group)
            counters = group[0].summary.spec_decode
            k = num_spec_tokens_of(records) or (
                len(counters.num_accepted_tokens_per_position) if counters else 0
            )
            max_tokens = max(c.summary.max_tokens for c in group)
            categories: dict[str, list[RequestRecord]] = defaultdict(list)
            for record in records:
                categories[record.category].append(record)
            first = group[0].summary
            workloads[workload] = {
                "dataset": first.dataset,
                "max_tokens": max_tokens,
                "temperature": first.temperature,
                "cells": [
                    cell_key(
                        label, workload, c.summary.concurrency, c.summary.repeat, c.summary.launch
                    )
                    for c in group
                ],
                OVERALL: _group(records, group, k, max_tokens, None),
                "per_category": {
                    name: _group(categories[name], group, k, max_tokens, name)
                    for name in sorted(categories)
                },
            }
        speculative = (suite_servers.get(label) or {}).get("speculative")
        profiles[label] = {
            "format": PROFILE_FORMAT,
            "version": PROFILE_VERSION,
            "config": label,
            "target_model": label_cells[0].summary.model,
            "speculative_config": speculative,
            "provenance": {
                "results_dir": str(results_dir),
                "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "specbench_version": __version__,
                "results_specbench_version": manifest.specbench_version if manifest else None,
                "engine": server.engine if server else None,
                "vllm_version": server.vllm_version if server else None,
                "server_argv": (server.provenance or {}).get("argv") if server else None,
            },
            "definitions": {
                "acceptance_length_step_weighted": "1 + Σ accepted / Σ verify steps (bonus "
                "included), vLLM's definition",
                "marginal_acceptance[i]": "P(at least i+1 drafts accepted in a step)",
                "conditional_acceptance[i]": "marginal[i] / marginal[i-1] (marginal[-1] := 1)",
                "acceptance_histogram[j]": "verify steps that accepted exactly j drafts",
                "position_bins": "steps by the output position of their first token",
                "thinking_answer": "steps starting before / after the answer start",
            },
            "workloads": workloads,
        }
    return profiles


def write_profiles(results_dir: Path, out: Path | None = None) -> list[Path]:
    """Write one `<label>.json` per speculative config into `out` (default RESULTS_DIR/profiles)."""
    if not results_dir.is_dir():
        raise SpecbenchError(f"{results_dir}: not a results directory")
    profiles = build_profiles(results_dir)
    folder = out or results_dir / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for label, profile in profiles.items():
        path = folder / f"{slug(label)}.json"
        temporary = path.with_suffix(".json.tmp")
        temporary.write_text(json.dumps(profile, indent=2, ensure_ascii=False) + "\n")
        temporary.replace(path)
        written.append(path)
    return written
