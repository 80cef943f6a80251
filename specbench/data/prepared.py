"""SPEED-Bench data prepared locally by NVIDIA's scripts: finding the files, reading them.

Model-Optimizer's `examples/specdec_bench/prepare_data.py` writes
`data/speed/<config>/test.parquet` (the 8 columns, placeholders resolved); NeMo-Skills'
`nemo_skills/dataset/speed-bench/prepare.py` writes `<config>.jsonl` with a `messages` list
of user messages in place of `turns`. Both, and an 8-column JSONL, load through `datasets`.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from specbench.common.errors import SpecbenchError
from specbench.data._hf import load_local_dataset
from specbench.data.speed_bench import (
    CONFIGS,
    PREPARE_HINT,
    SpeedBenchData,
    check_config,
    conversations_from_dataset,
)


def find_prepared_files(config: str, path: Path) -> list[Path]:
    """The data files of `config` under a local path, in the layouts NVIDIA's scripts write.

    A file is used as is. In a folder, the first match wins: `data/speed/<config>/test.parquet`
    and `speed/<config>/test.parquet` (Model-Optimizer's `prepare_data.py`, run from its
    example folder or pointed at `data/`), `<config>/test.parquet`, `test.parquet` in a folder
    named `<config>`, `<config>.jsonl` (NeMo-Skills' `prepare.py`), `<config>/*.parquet`
    (a hub-style layout).
    """
    check_config(config)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise SpecbenchError(f"{path}: no such file or folder")
    candidates = [
        path / "data" / "speed" / config / "test.parquet",
        path / "speed" / config / "test.parquet",
        path / config / "test.parquet",
    ]
    if path.name == config:
        candidates.append(path / "test.parquet")
    candidates += [path / f"{config}.jsonl", path / f"{config}.parquet"]
    for candidate in candidates:
        if candidate.is_file():
            return [candidate]
    shards = sorted((path / config).glob("*.parquet")) if (path / config).is_dir() else []
    if shards:
        return shards
    raise SpecbenchError(
        f"{path}: no prepared data for config {config!r} (looked for data/speed/{config}/"
        f"test.parquet, {config}/test.parquet, {config}.jsonl); "
        + PREPARE_HINT.format(config=config)
    )


def find_manifest(path: Path) -> Path | None:
    """The `prepared.json` of the folder `data prepare` wrote that holds `path`, if any.

    `path` is a data file or folder: `<DIR>` itself, `<DIR>/<config>.jsonl` (1 level down)
    or `<DIR>/speed/<config>/test.parquet` (3 levels down).
    """
    for folder in (path, *path.parents[:3]):
        manifest = folder / "prepared.json"
        if manifest.is_file():
            return manifest
    return None


def left_out_rows(manifest: Path, config: str) -> dict[str, int]:
    """Rows of `config` that `--skip-gated` left out, by reason (empty when it is whole)."""
    try:
        entry = json.loads(manifest.read_text(encoding="utf-8"))["configs"][config]
    except (OSError, ValueError, KeyError, TypeError):
        return {}  # not one of ours, or not this config: nothing recorded as missing
    if not isinstance(entry, dict) or not entry.get("partial"):
        return {}
    missing = entry.get("missing") or {}
    if not isinstance(missing, dict):
        return {}
    return dict(sorted(Counter(str(reason) for reason in missing.values()).items()))


def check_not_partial(config: str, files: list[Path], *, accept_partial: bool = False) -> None:
    """Refuse a config `data prepare --skip-gated` wrote without some rows (see prepared.json).

    `accept_partial` (the workload's field) lets it through.
    """
    manifest = find_manifest(files[0])
    if accept_partial or manifest is None:
        return
    left_out = left_out_rows(manifest, config)
    if left_out:
        raise SpecbenchError(
            f"{manifest}: config {config!r} is partial, {sum(left_out.values())} rows left out "
            f"({'; '.join(left_out)}); prepare it again with access to the source, or set "
            "accept_partial = true on the workload to measure the rest"
        )


def load_prepared(config: str, path: Path, *, accept_partial: bool = False) -> SpeedBenchData:
    """One config from locally prepared files (Model-Optimizer parquet, 8-column or NeMo JSONL).

    A config marked partial in `prepared.json` is refused unless `accept_partial`.
    """
    files = find_prepared_files(config, path)
    check_not_partial(config, files, accept_partial=accept_partial)
    dataset = load_local_dataset(files)
    where = str(files[0]) if len(files) == 1 else f"{files[0].parent}/*.parquet"
    return SpeedBenchData(
        config=config,
        conversations=conversations_from_dataset(dataset, config, where),
        source=str(files[0].resolve()) if len(files) == 1 else str(files[0].parent.resolve()),
    )


def infer_config(path: Path) -> str | None:
    """A config named by a prepared file's location: `<config>/test.parquet` or `<config>.jsonl`."""
    for name in (path.stem, path.parent.name):
        if name in CONFIGS:
            return name
    return None


def looks_like_speed_bench(path: Path) -> bool:
    """True when a local file has SPEED-Bench's own columns (`src_id` and `multiturn`)."""
    if not path.is_file():
        return False
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow
        import pyarrow.parquet as pq

        try:
            names = set(pq.read_schema(path).names)
        except (pyarrow.ArrowException, OSError, ValueError):  # not parquet: the loader says so
            return False
    elif suffix == ".jsonl":
        with path.open(encoding="utf-8") as handle:
            line = next((line for line in handle if line.strip()), "")
        try:
            first = json.loads(line) if line else {}
        except json.JSONDecodeError:
            return False
        names = set(first) if isinstance(first, dict) else set()
    else:
        return False
    return {"src_id", "multiturn"} <= names
