"""Thin wrappers around `datasets.load_dataset` for local files, so every format shares one path.

`datasets` is imported inside functions: importing it costs about a second, and the CLI's
`--help` must stay instant.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specbench.errors import SpecbenchError

#: File suffixes `load_local_rows` understands, mapped to the `datasets` builder that reads them.
BUILDERS: dict[str, str] = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}


def builder_for(path: Path) -> str:
    """The `datasets` packaged builder for a local data file, chosen by its suffix."""
    builder = BUILDERS.get(path.suffix.lower())
    if builder is None:
        allowed = ", ".join(sorted(BUILDERS))
        raise SpecbenchError(f"{path}: unsupported file type {path.suffix!r}; allowed: {allowed}")
    return builder


def load_local_rows(files: list[Path]) -> list[dict[str, Any]]:
    """Rows of local JSON/JSONL/Parquet files, read through `datasets` (and its cache).

    All files must share one suffix. Raises SpecbenchError naming the file when `datasets`
    cannot read it; callers that can point at a line do so before calling this.
    """
    if not files:
        raise SpecbenchError("no data files given")
    for path in files:
        if not path.is_file():
            raise SpecbenchError(f"{path}: file not found")
    builders = {builder_for(path) for path in files}
    if len(builders) != 1:
        raise SpecbenchError(f"{files[0].parent}: mixed file types {sorted(builders)}; use one")
    import datasets

    datasets.logging.set_verbosity_error()
    datasets.disable_progress_bars()
    try:
        dataset = datasets.load_dataset(
            builders.pop(), data_files=[str(path) for path in files], split="train"
        )
    except Exception as error:  # datasets raises many unrelated types for one bad file
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise SpecbenchError(f"{files[0]}: cannot read with datasets: {first}") from error
    return list(dataset)
