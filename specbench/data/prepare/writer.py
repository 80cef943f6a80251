"""Writing a prepared folder whole or not at all: a temporary folder, renamed at the end.

Layout (both shapes of every config, one `prepared.json`):

- `speed/<config>/test.parquet`: the 8 SPEED-Bench columns, as Model-Optimizer's
  `prepare_data.py` writes them (what `speed-bench:CONFIG:DIR` loads first);
- `<config>.jsonl`: NeMo-Skills' shape, `messages` (user turns) in place of `turns`, for
  `vllm bench serve --dataset-name speed_bench` and AIPerf.

A crash, Ctrl-C or a full disk leaves only `.<name>.partial-<pid>` next to the output,
never a folder that looks prepared.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.data.prepare import manifest


def check_output(output: Path) -> None:
    """Refuse an output that is a file, a folder of something else, or not writable."""
    if output.exists() and not output.is_dir():
        raise SpecbenchError(f"--output {output}: is a file; give a folder to write")
    if output.is_dir() and any(output.iterdir()) and not (output / manifest.NAME).is_file():
        raise SpecbenchError(
            f"--output {output}: folder is not empty and holds no {manifest.NAME}; "
            "give a new or empty folder, or one `data prepare` wrote"
        )
    parent = output.parent if output.parent != Path("") else Path(".")
    if not parent.is_dir():
        raise SpecbenchError(f"--output {output}: parent folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise SpecbenchError(f"--output {output}: folder {parent} is not writable")


def parquet_path(config: str) -> str:
    return f"speed/{config}/test.parquet"


def write_config(
    folder: Path, config: str, rows: list[dict[str, Any]], features: Any
) -> dict[str, str]:
    """Both shapes of one config; returns their paths relative to the folder."""
    import datasets

    parquet = folder / parquet_path(config)
    parquet.parent.mkdir(parents=True, exist_ok=True)
    datasets.disable_progress_bars()
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(parquet))
    with (folder / f"{config}.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            shaped = {key: value for key, value in row.items() if key != "turns"}
            shaped["messages"] = [{"role": "user", "content": turn} for turn in row["turns"]]
            handle.write(json.dumps(shaped, ensure_ascii=False) + "\n")
    return {"parquet": parquet_path(config), "jsonl": f"{config}.jsonl"}


@contextmanager
def staged(output: Path) -> Iterator[Path]:
    """A temporary folder that becomes `output` when the block ends without an error."""
    check_output(output)
    partial = output.parent / f".{output.name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    try:
        yield partial
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    old = output.parent / f".{output.name}.old-{os.getpid()}"
    if output.exists():
        output.rename(old)
    partial.rename(output)
    shutil.rmtree(old, ignore_errors=True)


def write_manifest(folder: Path, content: dict[str, Any]) -> None:
    text = json.dumps(content, indent=1, ensure_ascii=False) + "\n"
    (folder / manifest.NAME).write_text(text, encoding="utf-8")
