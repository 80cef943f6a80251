"""`specbench estimate SUITE --from DIR | --pilot`: its bad input (one line, exit 2), the
`--from` path, and the `run` paths that print the same estimate (`--estimate-from`, moved
and announced; `--dry-run` from its own `--output`). The estimates' numbers, and the pilot,
are measured end to end in tests/e2e/test_pilot_emulator.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import REPO, invoke_main

from specbench.run.plan import RunOptions, plan_suite
from specbench.run.resume import bind
from specbench.store.manifest import new_run, update_manifest
from specbench.suite import load_suite

SUITE = REPO / "suites" / "emulator.toml"
NONE = (
    "cost: cannot estimate: no earlier results of this suite and model (`specbench estimate "
    "SUITE --from DIR` fits them; `--pilot` measures a few conversations)"
)


def started(suite: Path, out: Path) -> Path:
    """`out` as a run of `suite` leaves it before its first cell: a manifest, no cell."""
    plan = plan_suite(load_suite(suite), RunOptions(output=out))
    update_manifest(out, lambda m: bind(m, plan, force=False).with_run(new_run("run")))
    return out


def other_suite(tmp_path: Path) -> Path:
    path = tmp_path / "other.toml"
    text = SUITE.read_text().replace('name = "emulator"', 'name = "other"')
    path.write_text(text.replace("../tests/", f"{REPO}/tests/"))
    return path


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), "error: estimate: give --from DIR (earlier results of this suite and model) or "),
        (("--pilot-size", "2"), "error: --pilot-size, --pilot-concurrency, --pilot-output: only "),
        (("--pilot-output", "p"), "error: --pilot-size, --pilot-concurrency, --pilot-output: "),
        (("--pilot-size", "0"), "error: Invalid value for '--pilot-size'"),
        (("--pilot", "--pilot-concurrency", "0"), "error: Invalid value for '--pilot-concurrency'"),
        (("--from", "{t}/nowhere"), "error: --from {t}/nowhere: no manifest.json with a suite "),
        (("--from", "{t}/other"), "error: --from {t}/other: results of suite 'other', not "),
        (("--pilot", "--pilot-output", "{t}/o"), "error: --pilot-output {t}/o: must lie outside"),
        (("--pilot", "--endpoint", "x"), "error: --endpoint expects NAME=http://host:port"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    started(other_suite(tmp_path), tmp_path / "other")
    filled = [arg.replace("{t}", str(tmp_path)) for arg in args]
    result = invoke_main("estimate", SUITE, "--output", tmp_path / "o", *filled)
    assert result.code == 2, result.stderr
    assert len(result.lines) == 1, result.stderr
    assert result.lines[0].startswith(expected.replace("{t}", str(tmp_path))), result.stderr
    assert not (tmp_path / "o").exists() and not (tmp_path / "o.pilot").exists()


def test_a_missing_suite_is_one_line() -> None:
    result = invoke_main("estimate")
    assert result.code == 2
    (line,) = result.lines
    assert line.startswith("error: Missing argument 'suite'. (see `")
    assert line.endswith(" estimate --help`)")


def test_from_results_without_usable_cells_says_it_cannot_estimate(tmp_path: Path) -> None:
    earlier = started(SUITE, tmp_path / "earlier")
    result = invoke_main("estimate", SUITE, "--from", earlier)
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines() == [NONE]
    assert result.lines == []
    other = invoke_main("estimate", other_suite(tmp_path), "--from", earlier)
    assert other.code == 2
    assert other.lines == [f"error: --from {earlier}: results of suite 'emulator', not 'other'"]


def test_run_estimate_from_still_works_and_names_its_replacement(tmp_path: Path) -> None:
    earlier = started(SUITE, tmp_path / "earlier")
    args = ("--output", tmp_path / "o", "--dry-run", "--estimate-from", earlier)
    result = invoke_main("run", SUITE, *args)
    assert result.code == 0, result.stderr
    assert result.stdout.startswith(f"suite emulator ({SUITE}): 6 of its 6 cells selected")
    assert result.stdout.splitlines()[-1] == NONE
    assert result.lines == [
        f"warning: --estimate-from is deprecated: use specbench estimate {SUITE} --from {earlier}"
    ]
    refused = invoke_main("run", SUITE, "--dry-run", "--estimate-from", tmp_path / "nowhere")
    assert refused.code == 2
    assert refused.lines == [
        f"error: --estimate-from {tmp_path / 'nowhere'}: no manifest.json with a suite there"
    ]


def test_a_dry_run_prices_from_its_own_output(tmp_path: Path) -> None:
    # A results directory of the suite is fitted (here it has no cell yet: nothing to fit);
    # errors in it would name --output, the option that gave it.
    out = started(SUITE, tmp_path / "o")
    result = invoke_main("run", SUITE, "--output", out, "--dry-run")
    assert result.code == 0, result.stderr
    assert "0 already complete in" in result.stdout
    assert result.stdout.splitlines()[-1] == NONE
    assert result.lines == []
