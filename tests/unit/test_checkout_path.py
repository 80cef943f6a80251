"""The tests that read CLI text pass wherever the checkout is, even at a deep path.

rich wraps lines at the console width, so a test that looks for words in CLI output used to
pass or fail with the length of the paths printed before them, i.e. with where the checkout
sits (issue 22: it failed from a clone in a 25-character `mktemp -d` folder). Every CLI the
tests run prints at one fixed wide width (harness.CONSOLE_ENV), whatever the terminal; at a
fixed width only a line that prints the checkout's own path grows with the checkout (tmp
paths do not), so every CLI run of the session (`run_cli`, `invoke_main`) checks that its
lines holding that path would still fit from a checkout 170 characters deep
(`harness.assert_fits_any_checkout`). Until issue 38 a copy of the checkout at such a path
ran every unit test file that runs the CLI a second time: 194 CPU-seconds (99 s alone) for
the same guarantee on fewer tests.
"""

from __future__ import annotations

import pytest
from harness import CONSOLE_ENV, DEEP_CHECKOUT, REPO, assert_fits_any_checkout, invoke_main, run_cli
from harness import cli as harness_cli

from specbench.cli.console import WIDTH_ENV

WIDTH = int(CONSOLE_ENV[WIDTH_ENV])


def test_a_line_that_would_wrap_from_a_deep_checkout_is_caught() -> None:
    deeper = max(0, DEEP_CHECKOUT - len(str(REPO)))
    fits_here_only = f"error: {REPO}/x " + "y" * (WIDTH - len(str(REPO)) - 10 - deeper // 2)
    assert len(fits_here_only) <= WIDTH  # it fits from this checkout
    with pytest.raises(AssertionError, match="would pass the console's 2000 columns"):
        assert_fits_any_checkout(fits_here_only)
    assert_fits_any_checkout("y" * (WIDTH - 10))  # no checkout path: the same from any checkout
    assert_fits_any_checkout(f"error: {REPO}/x")
    # A run at a width of its own (the console tests) is not the fixed console's.
    assert_fits_any_checkout(fits_here_only, {WIDTH_ENV: "3000"})


def test_every_cli_run_of_the_tests_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = REPO / "no-such-results"
    assert f"{missing} does not exist" in run_cli("report", missing).stderr
    assert f"{missing} does not exist" in invoke_main("report", missing).stderr
    # The same lines from a checkout far deeper than the console is wide: both refuse.
    monkeypatch.setattr(harness_cli, "DEEP_CHECKOUT", WIDTH + len(str(REPO)))
    with pytest.raises(AssertionError, match="prints the checkout's path"):
        run_cli("report", missing)
    with pytest.raises(AssertionError, match="prints the checkout's path"):
        invoke_main("report", missing)
