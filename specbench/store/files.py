"""Files of a results directory: atomic writes, JSON, and the append-only request records."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError

from specbench.client.record import RequestRecord
from specbench.common.errors import SpecbenchError
from specbench.store import layout
from specbench.store.summary import CellSummary


def read_summary(directory: Path) -> CellSummary:
    """A complete cell's summary; a corrupt or wrong-shaped file is one line naming it."""
    path = directory / layout.SUMMARY
    redo = "move the cell's folder away (or delete it) and rerun to measure the cell again"
    try:
        return CellSummary.model_validate(read_json(path))
    except SpecbenchError as error:
        raise SpecbenchError(f"{error}; {redo}") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise SpecbenchError(
            f"{path}: not a cell summary ({where}: {first['msg']}); {redo}"
        ) from None


def named(error: OSError, path: Path) -> OSError:
    """The error with `path` as its file name when the OS gave none (a failed write)."""
    if error.filename is None:
        return OSError(error.errno, error.strerror or str(error), str(path))
    return error


def _umask() -> int:
    """The process's umask, read without changing it where Linux says it (/proc, kernel 4.7+).

    Elsewhere it is set and put back at once, the only portable way to read it.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write via a temporary file in the same folder and rename, so a reader never sees half.

    The file gets the mode `open` would give it (0666 less the umask): `mkstemp` makes its
    file 0600, which would leave every results file readable by its writer alone. A failure
    removes the temporary file and names `path`, the file meant (the OS would name the
    temporary one, which is gone).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode() if isinstance(data, str) else data
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o666 & ~_umask())
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as error:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise OSError(error.errno, error.strerror or str(error), str(path)) from None
    except BaseException:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, data: BaseModel | dict[str, Any]) -> None:
    if isinstance(data, BaseModel):
        payload = data.model_dump_json(indent=2).encode()
    else:
        payload = orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    write_atomic(path, payload + b"\n")


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise SpecbenchError(f"{path}: no such file") from None
    except orjson.JSONDecodeError as error:
        raise SpecbenchError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise SpecbenchError(f"{path}: expected a JSON object")
    return data


class LineWriter:
    """Appends lines to one file, each flushed as written, so a crash keeps every line
    before it. A fresh attempt at a cell truncates the file first: lines of an interrupted
    attempt are not mixed with a new window's."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._handle = path.open("wb")

    def append(self, line: bytes) -> None:
        """Write one line (`line` ends with its newline) and flush it."""
        try:
            self._handle.write(line)
            self._handle.flush()
        except OSError as error:
            raise named(error, self._path) from None

    def close(self) -> None:
        try:
            self._handle.close()
        except OSError as error:  # the last buffered bytes could not be written
            raise named(error, self._path) from None


class RecordWriter(LineWriter):
    """Appends request records to `requests.jsonl`, one line each, as requests finish."""

    def write(self, record: RequestRecord) -> None:
        self.append(record.to_json_line())


def records_disagree(path: Path, records: int, summary: CellSummary) -> str | None:
    """Why a cell's `requests.jsonl` (holding `records`) does not match its summary, or None.

    A complete cell has one record per request its summary counts; fewer means the file was
    cut short (a crash or a full disk after the summary, a copy that stopped midway).
    """
    if records == summary.num_requests:
        return None
    return (
        f"{path}: holds {records} records, but summary.json counts {summary.num_requests} "
        "requests (the file is cut short or was changed): its per-request figures are "
        "incomplete; delete the cell's summary.json and rerun to measure it again"
    )


def read_records(path: Path) -> Iterator[RequestRecord]:
    """Records of a `requests.jsonl`, tolerating a truncated last line (a crash mid-write)."""
    with path.open("rb") as handle:
        lines = handle.read().split(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield RequestRecord.from_dict(orjson.loads(line))
        except (orjson.JSONDecodeError, TypeError) as error:
            if number >= len(lines) - 1:
                return  # the last line was cut short by a crash: ignore it
            raise SpecbenchError(f"{path}:{number}: not a request record ({error})") from None
