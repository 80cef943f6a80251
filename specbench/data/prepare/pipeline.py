"""`data prepare`: resolve whole configs from their upstream sources and write one folder."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.data._hf import hub_cut_off, quiet_datasets
from specbench.data.prepare import manifest, writer
from specbench.data.prepare.gated import check_access, gated_repos
from specbench.data.prepare.registry import DEFAULT_FLAVOUR, FLAVOURS, SOURCES
from specbench.data.prepare.resolve import resolve_config
from specbench.data.prepare.upstream import Upstream
from specbench.data.speed_bench import CONFIGS, DEFAULT_REVISION, check_config

Progress = Callable[[str, int, int], None]


def expand_configs(names: list[str]) -> list[str]:
    """Config names in SPEED-Bench's order; `all` for every config."""
    if not names:
        raise SpecbenchError("name a config, or `all`; allowed: " + ", ".join(CONFIGS))
    wanted = set(CONFIGS) if "all" in names else set(names)
    for name in wanted:
        check_config(name)
    return [config for config in CONFIGS if config in wanted]


def prepare(
    configs: list[str],
    output: Path,
    mirror: Path | None = None,
    revision: str = DEFAULT_REVISION,
    skip_gated: bool = False,
    progress: Progress | None = None,
    flavour: str = DEFAULT_FLAVOUR,
) -> dict[str, Any]:
    """Resolve `configs` and write `output` (both shapes and prepared.json); return the manifest.

    NeMo-Skills' flavour shares one HLE generator across the configs, in SPEED-Bench's config
    order, as its script does in one process: its HLE text depends on the configs asked for.
    """
    configs = expand_configs(configs)
    if flavour not in FLAVOURS:
        raise SpecbenchError(f"--flavour {flavour!r}: allowed: {', '.join(FLAVOURS)}")
    shared_rng: list[Any] | None = [] if flavour == "nemo-skills" else None
    writer.check_output(output)
    if mirror is not None and not mirror.is_dir():
        raise SpecbenchError(f"--mirror {mirror}: no such folder")
    if mirror is None and os.environ.get("HF_HUB_OFFLINE", "").strip() not in ("", "0"):
        raise SpecbenchError(
            "HF_HUB_OFFLINE is set: the upstream sources cannot be downloaded; fill a mirror "
            "(see `specbench data prepare --list-sources`) and pass --mirror DIR"
        )
    cut_off = hub_cut_off(quiet_datasets()) if mirror is None else None
    if cut_off is not None:
        raise SpecbenchError(
            f"the hub is not reachable ({cut_off}): the upstream sources cannot be "
            "downloaded; fill a mirror (see `specbench data prepare --list-sources`) and pass "
            "--mirror DIR"
        )
    skip = frozenset(s.match for s in SOURCES if s.gated) if skip_gated else frozenset()
    if mirror is None and not skip_gated:
        for repo in gated_repos():
            check_access(repo)
    upstream = Upstream(mirror=mirror)
    entries: dict[str, dict[str, Any]] = {}
    with writer.staged(output) as folder:
        for config in configs:
            step = (lambda done, total, c=config: progress(c, done, total)) if progress else None
            resolved = resolve_config(upstream, config, revision, skip, step, flavour, shared_rng)
            files = writer.write_config(folder, config, resolved.rows, resolved.features)
            entries[config] = manifest.config_entry(resolved, files)
        content = manifest.build(entries, revision, upstream.read, mirror, flavour)
        writer.write_manifest(folder, content)
    return content
