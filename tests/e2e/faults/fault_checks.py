"""The checks every fault case shares, as plain asserts.

A check whose failure means lost or bad data says so first (`DATA LOSS: …`): completed
cells changed or gone, a cell saved from bad data, a file the command had no business
touching. tools/faults_table.py counts the cases that failed that way.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

from harness import Outcome, pids_of, summary_bytes

#: The start of a failed check's message when the failure is lost or bad data.
DATA_LOSS = "DATA LOSS: "

#: Error types a request only gets when the harness itself broke it.
HARNESS_ERRORS = {"SystemExit", "KeyboardInterrupt", "CancelledError", "Interrupted"}


def assert_clean_exit(
    outcome: Outcome,
    codes: tuple[int, ...],
    contains: str | None = None,
    *,
    one_line: bool = True,
    prefix: str = "error: ",
) -> None:
    """Exit code in `codes`, no traceback, and (for errors) one line naming the problem."""
    assert outcome.code in codes, f"exit {outcome.code}, expected {codes}: {outcome.last}"
    assert "Traceback" not in outcome.stderr, "a traceback on stderr"
    if one_line:
        assert len(outcome.lines) == 1, f"{len(outcome.lines)} lines on stderr, not 1"
    elif prefix:  # after a campaign's progress lines: the message is one line, the last
        said = sum(line.startswith(prefix) for line in outcome.lines)
        assert said == 1, f"{said} lines start {prefix!r}, not 1"
    if prefix:
        assert outcome.last.startswith(prefix), f"the last line does not start {prefix!r}"
    if contains is not None:
        assert contains in outcome.last, f"the message lacks {contains!r}: {outcome.last}"


def assert_interrupted(outcome: Outcome, sig: int, code: int) -> None:
    """Stopped by `sig`: exit `code`, the message `interrupted: interrupted by SIG…`."""
    name = signal.Signals(sig).name
    assert_clean_exit(
        outcome, (code,), f"interrupted by {name}", one_line=False, prefix="interrupted: "
    )


def assert_ignored(outcome: Outcome, out: Path, cells: int) -> None:
    """A signal that stayed ignored: exit 0, all `cells` cells saved."""
    assert_clean_exit(outcome, (0,), one_line=False, prefix="")
    saved = len(summary_bytes(out))
    assert saved == cells, f"{saved} of {cells} cells saved"


def assert_kept(before: dict[Path, bytes], after: dict[Path, bytes]) -> None:
    """Completed cells are byte-identical afterwards."""
    changed = [str(p) for p in before if after.get(p) != before[p]]
    assert not changed, f"{DATA_LOSS}completed cells changed or lost: {changed}"


def assert_consistent(root: Path) -> None:
    """No cell saved as complete from bad data: each summary agrees with its records."""
    problems = saved_cell_problems(root)
    assert not problems, DATA_LOSS + "; ".join(problems)


def assert_no_leftovers(tag: str, wait_s: float = 30.0) -> None:
    """No process whose command line holds `tag` after `wait_s` (those left are killed)."""
    deadline = time.monotonic() + wait_s
    while pids_of(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = pids_of(tag)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"


def saved_cell_problems(root: Path) -> list[str]:
    """Saved cells whose records disagree with their summary, or that hold a harness error."""
    problems = []
    for path in sorted(root.rglob("summary.json")):
        if path.parent.name == "report" or "report" in path.relative_to(root).parts:
            continue
        try:
            summary = json.loads(path.read_text())
            rows = [json.loads(line) for line in (path.parent / "requests.jsonl").open()]
        except (OSError, ValueError) as error:
            problems.append(f"{path.parent}: unreadable cell ({error})")
            continue
        failed = sum(row.get("error_type") is not None for row in rows)
        if len(rows) != summary.get("num_requests") or failed != summary.get("num_failed"):
            problems.append(
                f"{path.parent}: {len(rows)} records ({failed} failed) but the summary counts "
                f"{summary.get('num_requests')} ({summary.get('num_failed')} failed)"
            )
        harness = [r["error_type"] for r in rows if r.get("error_type") in HARNESS_ERRORS]
        if harness:
            problems.append(f"{path.parent}: saved with requests the harness broke: {harness}")
    return problems


def only_summary(out: Path) -> dict[str, object]:
    """The one summary.json below `out` ({} unless there is exactly one)."""
    found = list(out.rglob("summary.json"))
    return dict(json.loads(found[0].read_text())) if len(found) == 1 else {}


def assert_refused(outcome: Outcome, contains: str, out: Path) -> None:
    """Bad input refused before anything runs: exit 2, one line naming `contains`, and nothing
    written under `out` (no logs/, no requests.jsonl)."""
    assert_clean_exit(outcome, (2,), contains)
    assert not (out / "logs").exists() and not list(out.rglob("requests.jsonl")), "wrote"
