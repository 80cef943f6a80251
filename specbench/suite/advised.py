"""An "advised" K schedule: a server's schedule read from a results directory's advice.

`speculative.num_speculative_tokens_per_batch_size = "advised"` with `advised_from = "DIR"`
(a specbench results directory, relative to the suite's folder) takes the ranges of the
`schedule` object in `DIR/report/advice.json`, which the advice report writes. It is
resolved here, on the raw server table when the suite loads, so the server's identity, the
manifest and the dry run hold the ranges actually run; where they came from is kept beside
(`Suite.advised_schedules`), out of the suite hash like any location. Only the schedule's
`num_speculative_tokens` and `num_speculative_tokens_per_batch_size` are read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from specbench.common.errors import SpecbenchError
from specbench.common.k_schedule import check_schedule
from specbench.launch.config import SCHEDULE_KEY

#: The schedule value that asks for the advice's ranges.
ADVISED = "advised"
#: The key naming the results directory an "advised" schedule is read from.
ADVISED_FROM = "advised_from"
#: Where a results directory keeps its advice.
ADVICE_FILE = Path("report") / "advice.json"


def resolve_advised(server: str, table: dict[str, Any], source: Path) -> Path | None:
    """Replace an "advised" schedule in `server`'s merged raw `table` by the advice's ranges
    (in place) and return the advice file read; None when the schedule is not "advised".
    Every problem is one line naming the field and the file."""
    speculative = table.get("speculative")
    if not isinstance(speculative, dict):
        return None
    where = f"{source}: servers.{server}.speculative"
    schedule = speculative.get(SCHEDULE_KEY)
    directory = speculative.pop(ADVISED_FROM, None)
    if isinstance(schedule, str) and schedule != ADVISED:
        raise SpecbenchError(
            f"{where}.{SCHEDULE_KEY}: {schedule!r} is not allowed; give ranges "
            f'[[start, end, K], …] or "{ADVISED}" with {ADVISED_FROM} = "RESULTS_DIR"'
        )
    if schedule != ADVISED:
        if directory is not None:
            raise SpecbenchError(
                f"{where}.{ADVISED_FROM}: it names the results directory an advised schedule "
                f'is read from; set {SCHEDULE_KEY} = "{ADVISED}" too, or drop it'
            )
        return None
    if not isinstance(directory, str) or not directory.strip():
        raise SpecbenchError(
            f'{where}.{SCHEDULE_KEY}: "{ADVISED}" needs {ADVISED_FROM} = "RESULTS_DIR", a '
            f"specbench results directory whose {ADVICE_FILE} holds the schedule"
        )
    folder = (source.parent / Path(directory.strip()).expanduser()).resolve()
    maximum, ranges, advice = read_advised_schedule(folder, f"{where}.{ADVISED_FROM}")
    own = speculative.get("num_speculative_tokens")
    if isinstance(own, int) and not isinstance(own, bool) and own < maximum:
        raise SpecbenchError(
            f"{where}.num_speculative_tokens: {own} is smaller than the advised schedule's "
            f"num_speculative_tokens = {maximum} ({advice}); raise it to {maximum} so every "
            "advised K runs as written"
        )
    speculative[SCHEDULE_KEY] = ranges
    return advice


def read_advised_schedule(folder: Path, where: str) -> tuple[int, list[list[int]], Path]:
    """(num_speculative_tokens, ranges, the advice file) of the schedule advised in the
    results directory `folder`; a problem is one `SpecbenchError` line starting `where`."""
    if not folder.is_dir():
        raise SpecbenchError(f"{where}: results directory {folder} does not exist")
    advice = folder / ADVICE_FILE
    try:
        document = json.loads(advice.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecbenchError(
            f"{where}: {advice} does not exist (the report of a results directory with a "
            "baseline and several Ks writes the advice)"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SpecbenchError(f"{where}: cannot read {advice}: {error}") from None
    schedule = document.get("schedule") if isinstance(document, dict) else None
    if not isinstance(schedule, dict):
        raise SpecbenchError(f"{where}: {advice} holds no schedule object: no schedule advised")
    maximum = schedule.get("num_speculative_tokens")
    if not isinstance(maximum, int) or isinstance(maximum, bool) or maximum < 1:
        raise SpecbenchError(
            f"{where}: {advice}: schedule.num_speculative_tokens is {maximum!r}, not an "
            "integer of 1 or more"
        )
    entries = schedule.get(SCHEDULE_KEY)
    if not isinstance(entries, list) or not all(isinstance(entry, list) for entry in entries):
        raise SpecbenchError(
            f"{where}: {advice}: schedule.{SCHEDULE_KEY} is {entries!r}, not a list of "
            "[start, end, K] ranges"
        )
    try:
        ranges = check_schedule(entries)
    except ValueError as error:
        raise SpecbenchError(f"{where}: {advice}: schedule.{SCHEDULE_KEY}: {error}") from None
    return maximum, [list(entry) for entry in ranges], advice
