"""The card's header: what was measured, on what, when, in the words a model card uses.

One row per fact (suite, model, draft, GPUs, vLLM, dataset, date, results), read from the
manifests of the report's results directories only. Nothing here is a local path: a model
or dataset given as a path on the measuring machine is named by its last component and
marked "local"; the results directory by its report name (`results.names`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from specbench.analysis.table import Table
from specbench.common.errors import SpecbenchError
from specbench.store.manifest import Manifest, read_manifest

#: The header's table name (its anchor on the page, its file under tables/).
HEADER = "card_header"
#: Where each fact comes from, for the table's footnote.
_SOURCE_NOTE = (
    "From manifest.json: the suite as run, each server's recorded start, the workloads' "
    "datasets, the runs' UTC times."
)


def local_name(value: str) -> str:
    """A hub id as it is; a path on the measuring machine as its last component, '(local)'."""
    if value.startswith(("/", "./", "../", "~")):
        return f"{Path(value).name or value} (local)"
    return value


def _joined(values: Iterable[str]) -> str:
    unique = list(dict.fromkeys(v for v in values if v))
    return "; ".join(unique) if unique else "not recorded"


def _k(server: Mapping[str, Any]) -> int | None:
    speculative = server.get("speculative") or {}
    if speculative.get("num_speculative_tokens") is not None:
        return int(speculative["num_speculative_tokens"])
    acceptance = (server.get("emulator") or {}).get("acceptance")
    return len(acceptance) if acceptance else None


def _draft(name: str, server: Mapping[str, Any]) -> str | None:
    """`NAME: DRAFT (METHOD, K = k)` of a speculative server of the suite, else None."""
    speculative = server.get("speculative")
    k = _k(server)
    if speculative:
        method = str(speculative.get("method") or "speculative")
        draft = speculative.get("model")
        what = local_name(str(draft)) if draft else "no draft checkpoint"
        return f"{name}: {what} ({method}, K = {k})"
    if server.get("engine") == "emulator" and k and not server.get("baseline"):
        return f"{name}: emulated drafts (K = {k})"
    return None


def _gpus(manifest: Manifest) -> list[str]:
    """`N × PRODUCT` when the node's GPU tool named it, else the count alone; servers that
    read the same are named together (`baseline, eagle3: 8 × AMD Instinct MI355X`)."""
    said: dict[str, list[str]] = {}
    for name, record in sorted(manifest.servers.items()):
        provenance = record.provenance or {}
        inventory = provenance.get("gpu_inventory") or {}
        product = inventory.get("product")
        count = record.gpus
        if record.engine == "emulator":
            text = f"emulated ({count} counted per server)"
        elif count is None:
            text = "not recorded"
        elif product:
            text = f"{count} × {product}"
        elif str(provenance.get("gpu_check") or "").startswith("none used"):
            text = f"none ({provenance['gpu_check'].split(';')[0].removeprefix('none used: ')})"
        else:
            tool = inventory.get("tool")
            seen = f"; the node's GPU tool ({tool}) named no product" if tool else ""
            text = f"{count} (product not recorded{seen})"
        said.setdefault(text, []).append(name)
    return [f"{', '.join(names)}: {text}" for text, names in said.items()]


def _vllm(manifest: Manifest) -> list[str]:
    found = []
    for record in manifest.servers.values():
        version = record.vllm_version or (record.provenance or {}).get("vllm_version")
        if version:
            found.append(f"{version} (emulated)" if record.engine == "emulator" else version)
    return found


def _dataset(manifest: Manifest) -> list[str]:
    found = []
    for workload in manifest.workloads.values():
        spec = str(workload.spec.get("dataset") or "")
        kind = spec.partition(":")[0]
        name = spec if kind in ("speed-bench", "mt-bench") else local_name(spec)
        if kind in ("speed-bench", "mt-bench") and spec.count(":") > 1:
            name = ":".join(spec.split(":")[:2])  # drop a local path after the config
        revision = workload.dataset_revision
        found.append(f"{name} @ {revision[:12]}" if revision else f"{name} (revision not recorded)")
    return found


def _dates(manifest: Manifest) -> str | None:
    starts = [r.started_at[:10] for r in manifest.runs if r.started_at]
    ends = [r.finished_at[:10] for r in manifest.runs if r.finished_at]
    if not starts:
        return None
    first, last = min(starts), max(ends or starts)
    return first if first == last else f"{first} to {last}"


def card_header(results_dirs: Sequence[Path], names: Mapping[Path, str], compared: str) -> Table:
    """The header of report.md and the page: one row per fact, values joined over dirs;
    `compared` says which configs the report compares."""
    manifests: list[tuple[str, Manifest]] = []
    unreadable: list[str] = []
    for directory in results_dirs:
        try:
            manifest = read_manifest(directory)
        except SpecbenchError:
            manifest = None
        if manifest is None:
            unreadable.append(names[directory])
        else:
            manifests.append((names[directory], manifest))
    suites = [m.suite or {} for _, m in manifests]
    servers = [(n, s) for suite in suites for n, s in sorted((suite.get("servers") or {}).items())]
    rows = [
        ("Suite", _joined(_suite_line(s) for s in suites)),
        ("Model", _joined(local_name(str(s.get("model"))) for _, s in servers if s.get("model"))),
        ("Draft", _joined(filter(None, (_draft(n, s) for n, s in servers)))),
        ("GPUs", _joined(g for _, m in manifests for g in _gpus(m))),
        ("vLLM", _joined(v for _, m in manifests for v in _vllm(m))),
        ("Dataset", _joined(d for _, m in manifests for d in _dataset(m))),
        ("Date (UTC)", _joined(filter(None, (_dates(m) for _, m in manifests)))),
        ("Results", _joined(_results_line(n, m) for n, m in manifests)),
        ("Compared", compared),
    ]
    notes = [_SOURCE_NOTE]
    if unreadable:
        notes.append(f"No readable manifest in {', '.join(unreadable)}: not in this header.")
    import pandas as pd

    return Table(
        name=HEADER,
        title="What was measured",
        columns=("Field", "Value"),
        rows=tuple(rows),
        data=pd.DataFrame([{"field": f, "value": v} for f, v in rows]),
        align=("left", "left"),
        footnotes=tuple(notes),
    )


def _suite_line(suite: Mapping[str, Any]) -> str:
    name = str(suite.get("name") or "unnamed suite")
    description = suite.get("description")
    return f"{name}: {description}" if description else name


def _results_line(name: str, manifest: Manifest) -> str:
    digest = (manifest.suite_hash or "")[:12]
    return f"{name} (suite hash {digest})" if digest else name


def report_title(results_dirs: Sequence[Path]) -> str:
    """The page's and report.md's title: the suites' names, else 'specbench report'."""
    names = []
    for directory in results_dirs:
        try:
            manifest = read_manifest(directory)
        except SpecbenchError:
            continue
        if manifest is not None and manifest.suite and manifest.suite.get("name"):
            names.append(str(manifest.suite["name"]))
    unique = list(dict.fromkeys(names))
    return f"{', '.join(unique)}: specbench report" if unique else "specbench report"
