"""Settings of every test: CLI output that does not depend on where or how tests run.

rich wraps at the console width, which otherwise comes from the terminal pytest runs in (a
developer's) or rich's 80 columns (CI), and a wrapped line breaks where the length of a
printed path (the checkout's, pytest's tmp_path) puts it. Every `specbench` the tests run,
in a subprocess or in process, prints at one fixed wide width instead (helpers.CONSOLE_ENV);
FORCE_COLOR and friends would put escape codes between the words tests look for.
"""

from __future__ import annotations

import os

from helpers import CONSOLE_ENV, UNSET_CONSOLE_ENV

os.environ.update(CONSOLE_ENV)
for _name in UNSET_CONSOLE_ENV:
    os.environ.pop(_name, None)
