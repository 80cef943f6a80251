"""`failure.json`: why a cell has no summary. One writer, one reader."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError

from specbench.common.errors import SpecbenchError
from specbench.common.model import Frozen
from specbench.store import files, layout


class FailureRecord(Frozen):
    """A cell that could not be measured: the error, and the server's state at the time."""

    error_type: str = Field(description="ServerError, or the error class that stopped the cell.")
    message: str = Field(description="One line for the user.")
    at: str = Field(description="UTC ISO-8601 when the cell failed.")
    server_alive: bool | None = Field(
        default=None, description="Whether the server still answered; None if not checked."
    )
    log_tail: list[str] = Field(default_factory=list, description="Last lines of the server log.")


def write_failure(directory: Path, record: FailureRecord) -> None:
    files.write_json(directory / layout.FAILURE, record)


def read_failure(directory: Path) -> FailureRecord:
    """The failure of a cell; an unreadable file still yields a record that says so."""
    path = directory / layout.FAILURE
    try:
        raw = files.read_json(path)
        try:
            return FailureRecord.model_validate(raw)
        except ValidationError:
            return FailureRecord.model_validate(_legacy(raw))
    except (ValidationError, SpecbenchError) as error:
        message = str(error).splitlines()[0]
        return FailureRecord(
            error_type="unreadable", message=f"unreadable failure.json: {message}", at=""
        )


def _legacy(raw: dict[str, object]) -> dict[str, object]:
    """A hand-written or partial failure file: its reason under `message`, `error` or `reason`."""
    reason = raw.get("message") or raw.get("error") or raw.get("reason") or "no reason recorded"
    return {"error_type": "unknown", "message": str(reason), "at": str(raw.get("at", ""))}
