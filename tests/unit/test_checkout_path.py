"""The tests that read CLI text pass wherever the checkout is: at a short path and a deep one.

rich wraps lines at the console width, so a test that looks for words in CLI output used to
pass or fail with the length of the paths printed before them, i.e. with where the checkout
sits (issue 22: it failed from a clone in a 25-character `mktemp -d` folder). Here the
checkout (package, tests, fixtures, suites) is copied to a short and to a 170-character
path, and those tests (every unit test file that runs the CLI) run in each copy with a
narrow terminal: they must all pass there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import CONSOLE_ENV, REPO

#: A unit test file that runs the CLI (subprocess or in process) reads what it prints.
RUNS_THE_CLI = re.compile(r"\b(run_cli|popen_cli|CliRunner)\b|helpers import .*\bCLI\b")
#: What a checkout needs to run them.
COPIED = ("pyproject.toml", "specbench", "tests", "suites", "docs")
DEEP_LENGTH = 170


def copy_checkout(to: Path) -> Path:
    to.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.egg-info")
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, to / name, ignore=ignore)
        else:
            shutil.copy2(source, to / name)
    return to


def cli_text_tests() -> list[str]:
    """Every unit test file that runs the CLI, as paths relative to the checkout."""
    found = [
        path.relative_to(REPO).as_posix()
        for path in sorted((REPO / "tests" / "unit").rglob("test_*.py"))
        if path != Path(__file__).resolve() and RUNS_THE_CLI.search(path.read_text())
    ]
    assert len(found) >= 5, found  # inspect, report, gate, lossless, slurm at least
    return found


def checkout_env(checkout: Path) -> dict[str, str]:
    """This environment, importing `checkout`'s package, without the suite's fixed width."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in CONSOLE_ENV and not name.startswith("PYTEST_")
    }
    # A narrow terminal: without the suite's own fixed width, long lines would wrap.
    env.update(COLUMNS="50", PYTHONPATH=str(checkout), PYTHONDONTWRITEBYTECODE="1")
    return env


def start_tests(checkout: Path, files: list[str]) -> subprocess.Popen[str]:
    """`files` of `checkout`, in a pytest of their own, importing its own package."""
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files],
        cwd=checkout,
        env=checkout_env(checkout),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def package_of(checkout: Path) -> Path:
    script = "import specbench; print(specbench.__file__)"
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=checkout,
        env=checkout_env(checkout),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return Path(result.stdout.strip()).parent


def test_cli_text_tests_pass_from_a_short_and_a_deep_checkout(tmp_path: Path) -> None:
    runs: list[subprocess.Popen[str]] = []
    short = Path(tempfile.mkdtemp(prefix="sb", dir="/tmp" if os.access("/tmp", os.W_OK) else None))
    try:
        deep = tmp_path / "a-checkout-folder-nested-deep"
        while len(str(deep)) < DEEP_LENGTH:
            deep /= "deeper-still"
        checkouts = [copy_checkout(short / "r"), copy_checkout(deep)]
        lengths = [len(str(checkout)) for checkout in checkouts]
        assert lengths[1] >= DEEP_LENGTH and lengths[1] - lengths[0] >= 100, lengths
        assert [package_of(c) for c in checkouts] == [c / "specbench" for c in checkouts]
        files = cli_text_tests()
        # Both at once: on two cores, in about the time of one.
        runs = [start_tests(checkout, files) for checkout in checkouts]
        outputs = [run.communicate(timeout=540)[0] for run in runs]
    finally:
        for run in runs:
            if run.poll() is None:
                run.kill()
                run.wait()
        shutil.rmtree(short, ignore_errors=True)
    counts = []
    for checkout, run, output in zip(checkouts, runs, outputs, strict=True):
        last = output.strip().splitlines()[-1]
        assert run.returncode == 0, f"from {checkout}:\n{output[-4000:]}"
        # All passed: no test skipped, failed or errored.
        assert re.fullmatch(r"=* ?\d+ passed(, \d+ warnings?)? in [\d.]+s( \(.*\))? ?=*", last), (
            last
        )
        counts.append(int(last.strip("= ").split()[0]))
    assert counts[0] == counts[1] >= 30
