"""The tests that read CLI text pass wherever the checkout is, even at a deep path.

rich wraps lines at the console width, so a test that looks for words in CLI output used to
pass or fail with the length of the paths printed before them, i.e. with where the checkout
sits (issue 22: it failed from a clone in a 25-character `mktemp -d` folder). Every CLI the
tests run now prints at one fixed wide width (harness.CONSOLE_ENV), whatever the terminal;
at a fixed width a longer path can only make a line longer, so the deepest checkout is the
one that can wrap. Here the checkout (package, tests, tools, fixtures, suites) is copied to
a 170-character path, and those tests (every unit test file that runs the CLI) run there
with a narrow terminal: they must all pass. (A second, short copy ran beside it until
issue 28: it could only pass where the deep one did, at the cost of a second run.)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from harness import CONSOLE_ENV, REPO

#: A unit test file that runs the CLI (subprocess or in process) reads what it prints.
RUNS_THE_CLI = re.compile(
    r"\b(run_cli|popen_cli|invoke_main|CliRunner)\b|(helpers|harness) import .*\bCLI\b"
)
#: What a checkout needs to run them.
COPIED = ("pyproject.toml", "specbench", "tests", "tools", "suites", "docs")
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


#: The copy's tests mostly wait on specbench subprocesses, so they run on workers of their
#: own (grouped as `make test` groups them): alone they were the unit tests' longest pole.
WORKERS = ("-n", "3", "--dist", "loadgroup")


def start_tests(checkout: Path, files: list[str]) -> subprocess.Popen[str]:
    """`files` of `checkout`, in a pytest of their own, importing its own package."""
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *WORKERS, *files],
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


def test_cli_text_tests_pass_from_a_deep_checkout(tmp_path: Path) -> None:
    deep = tmp_path / "a-checkout-folder-nested-deep"
    while len(str(deep)) < DEEP_LENGTH:
        deep /= "deeper-still"
    checkout = copy_checkout(deep)
    assert package_of(checkout) == checkout / "specbench"
    run = start_tests(checkout, cli_text_tests())
    try:
        output = run.communicate(timeout=540)[0]
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    last = output.strip().splitlines()[-1]
    assert run.returncode == 0, f"from {checkout}:\n{output[-4000:]}"
    # All passed: no test skipped, failed or errored.
    assert re.fullmatch(r"=* ?\d+ passed(, \d+ warnings?)? in [\d.]+s( \(.*\))? ?=*", last), last
    assert int(last.strip("= ").split()[0]) >= 30
