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
"""

from __future__ import annotations

import os
import signal

from harness import CONSOLE_ENV, UNSET_CONSOLE_ENV

os.environ.update(CONSOLE_ENV)
for _name in UNSET_CONSOLE_ENV:
    os.environ.pop(_name, None)

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
