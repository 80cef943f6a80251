"""Thin wrappers around `datasets.load_dataset`, so hub repos and local files share one path.

`datasets` is imported inside functions: importing it costs about a second, and the CLI's
`--help` must stay instant. Its objects are typed `Any` here for the same reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from specbench.common.errors import SpecbenchError

#: File suffixes specbench reads, mapped to the `datasets` packaged builder that reads them.
BUILDERS: dict[str, str] = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}


def builder_for(path: Path) -> str:
    """The `datasets` packaged builder for a local data file, chosen by its suffix."""
    builder = BUILDERS.get(path.suffix.lower())
    if builder is None:
        allowed = ", ".join(sorted(BUILDERS))
        raise SpecbenchError(f"{path}: unsupported file type {path.suffix!r}; allowed: {allowed}")
    return builder


def quiet_datasets() -> Any:
    """`datasets`, imported, its progress bars and the hub's retry warnings silenced."""
    import datasets
    from huggingface_hub.utils import logging as hub_logging

    datasets.logging.set_verbosity_error()
    hub_logging.set_verbosity_error()  # no "Retrying in 8s" lines: the error says it once
    datasets.disable_progress_bars()
    return datasets


def first_line(error: BaseException) -> str:
    """The first line of an exception's message, for one-line user errors."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _is_empty(path: Path) -> bool:
    # datasets fails on empty files with messages that do not say so.
    if path.suffix.lower() == ".parquet":
        import pyarrow
        import pyarrow.parquet as pq

        try:
            return bool(pq.read_metadata(path).num_rows == 0)
        except (pyarrow.ArrowException, OSError, ValueError):  # not parquet: datasets says so
            return False
    with path.open("rb") as handle:
        return not any(line.strip() for line in handle)


def load_local_dataset(files: list[Path]) -> Any:
    """A `datasets.Dataset` of local JSON/JSONL/Parquet files (one suffix), via its cache."""
    if not files:
        raise SpecbenchError("no data files given")
    for path in files:
        if not path.is_file():
            raise SpecbenchError(f"{path}: file not found")
    builders = {builder_for(path) for path in files}
    if len(builders) != 1:
        raise SpecbenchError(f"{files[0].parent}: mixed file types {sorted(builders)}; use one")
    if all(_is_empty(path) for path in files):
        raise SpecbenchError(f"{files[0]}: dataset is empty (no rows)")
    datasets = quiet_datasets()
    try:
        return datasets.load_dataset(
            builders.pop(), data_files={"test": [str(path) for path in files]}, split="test"
        )
    except Exception as error:  # datasets raises many unrelated types for one bad file
        raise SpecbenchError(
            f"{files[0]}: cannot read with datasets: {first_line(error)}"
        ) from error


def hub_cut_off(datasets: Any) -> str | None:
    """Why the hub cannot be reached now (None: reachable, or `HF_HUB_OFFLINE` already set).

    Without this, an offline machine waits about 24 s for `datasets`' retries to give up.
    """
    from specbench.data.hub_reach import unreachable

    if datasets.config.HF_HUB_OFFLINE:
        return None
    return unreachable(datasets.config.HF_ENDPOINT)


@contextmanager
def offline_if(cut_off: bool, datasets: Any) -> Iterator[None]:
    """`HF_HUB_OFFLINE` for the block when `cut_off`: `datasets` then answers from its cache
    at once, as it would after its retries, or fails at once."""
    if not cut_off:
        yield
        return
    import huggingface_hub.constants

    # Both libraries read the variable once, at import: their module constants are the switch.
    saved = datasets.config.HF_HUB_OFFLINE, huggingface_hub.constants.HF_HUB_OFFLINE
    datasets.config.HF_HUB_OFFLINE = huggingface_hub.constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        datasets.config.HF_HUB_OFFLINE, huggingface_hub.constants.HF_HUB_OFFLINE = saved


def load_repo_dataset(path: str, config: str, revision: str | None) -> Any:
    """The `test` split of one config of a hub repo id, or of a local folder laid out like one.

    Both go through `datasets.load_dataset(path, config, split="test", revision=...)`; for a
    local folder `datasets` reads the `configs:` block of its README.md, as the hub does.
    """
    datasets = quiet_datasets()
    where = f"{path} config {config!r}" + (f" at revision {revision}" if revision else "")
    # datasets 5.2 reuses its cache of a local repo folder after the files change: re-read it.
    local = Path(path).is_dir()
    fresh: dict[str, Any] = (
        {"download_mode": "force_redownload", "verification_mode": "no_checks"} if local else {}
    )
    cut_off = None if local else hub_cut_off(datasets)
    try:
        with offline_if(cut_off is not None, datasets):
            return datasets.load_dataset(path, config, split="test", revision=revision, **fresh)
    except ValueError as error:
        message = first_line(error)
        if "not found" in message.lower() and config in message:
            raise SpecbenchError(f"{where}: the repository has no config {config!r}") from error
        raise SpecbenchError(f"{where}: cannot load: {message}") from error
    except Exception as error:  # network, offline mode, missing revision, corrupt cache
        cause = f"{type(error).__name__}: {first_line(error)}"
        if cut_off is not None:
            cause = f"hub not reachable: {cut_off}; not in the datasets cache either"
        raise SpecbenchError(
            f"{where}: cannot load ({cause}); "
            "check the network or the revision; offline (HF_HUB_OFFLINE=1), use a folder from "
            "`specbench data prepare` (run --data-dir DIR) or point SPECBENCH_SPEED_BENCH_REPO "
            "at a local copy"
        ) from error
