"""Settings of every test: CLI output that does not depend on where or how tests run.

rich wraps at the console width, which otherwise comes from the terminal pytest runs in (a
developer's) or rich's 80 columns (CI), and a wrapped line breaks where the length of a
printed path (the checkout's, pytest's tmp_path) puts it. Every `specbench` the tests run,
in a subprocess or in process, prints at one fixed wide width instead (harness.CONSOLE_ENV);
FORCE_COLOR and friends would put escape codes between the words tests look for.

A pytest started in the background from a script (`make test &`) inherits SIGINT as
ignored, and so would every process the tests start: `specbench serve` keeps an inherited
ignored SIGINT ignored (on purpose), and the tests that stop it with SIGINT would hang.
The tests' own processes get the ordinary disposition; tests of the inherited-ignored
case set it themselves.

`make test` runs one `pytest -n N --dist loadgroup`: xdist hands each test to whichever
worker is free, except the tests of one group, which run on one worker in turn.
`pytest_collection_modifyitems` puts each test that shares something costly in its group
(`xdist_group`): the real-vLLM tests of the pool (marker `vllm` and the `vllm_servers`
fixture: one pool of servers, vllm_pool.py),
the real-Slurm tests (marker `slurm`, one test Slurm), and the tests of a module or
fixture directory that share a module- or session-scoped fixture of their own (an
emulator campaign, a prepared dataset), which would otherwise be built again on every
worker that runs one of them.
"""

from __future__ import annotations

import os
import signal

import pytest
from harness import CONSOLE_ENV, UNSET_CONSOLE_ENV

os.environ.update(CONSOLE_ENV)
for _name in UNSET_CONSOLE_ENV:
    os.environ.pop(_name, None)

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


#: Markers whose tests share one costly thing and so run on one worker, in turn; with the
#: fixture that holds it where not every test of the marker asks for it. A real-vLLM test
#: that does not use the pool (a bad flag's own start, the tiny models' rebuild) shares
#: nothing: kept in the group, it only lengthened the group's worker by its 100-130 s
#: under load, and that worker's chain of tests was the run's longest.
SHARED_MARKERS: dict[str, str | None] = {"vllm": "vllm_servers", "slurm": None}


def xdist_group_of(item: pytest.Item) -> str | None:
    """The group whose worker runs `item`, or None: any worker may.

    A marker of SHARED_MARKERS names the group (when the test uses the marker's shared
    fixture); otherwise a module- or session-scoped
    fixture defined in the tests (not a plugin's, such as tmp_path_factory) does: its
    module or conftest directory, and the fixture's name for a session-scoped one.
    """
    for marker, fixture in SHARED_MARKERS.items():
        uses = fixture is None or fixture in getattr(item, "fixturenames", ())
        if item.get_closest_marker(marker) is not None and uses:
            return marker
    info = getattr(item, "_fixtureinfo", None)
    shared = []
    for name in getattr(item, "fixturenames", ()):
        definitions = info.name2fixturedefs.get(name) if info is not None else None
        if not definitions:
            continue
        definition = definitions[-1]
        if definition.baseid and definition.scope in ("module", "session", "package"):
            suffix = f"::{name}" if definition.scope != "module" else ""
            shared.append(f"{definition.baseid}{suffix}")
    return min(shared) if shared else None


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        group = xdist_group_of(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
