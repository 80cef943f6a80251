"""Every default that more than one layer shows (CLI, run options, launcher, suite), once.

Plain constants, no imports: the CLI reads them at startup without importing pydantic.
"""

#: Seconds a started server gets to answer /health and list its model.
READY_TIMEOUT_S = 1800.0
#: Restarts of a dead server before its remaining cells are given up.
MAX_RESTARTS = 2
#: Seconds without data before a measured request fails.
REQUEST_TIMEOUT_S = 600.0
#: `bench`: output cap per request, warmup conversations per cell.
BENCH_MAX_TOKENS = 256
BENCH_WARMUP = 2

#: |client − server| / server output tokens beyond which a cell warns (vLLM 0.32 agrees
#: exactly when nothing fails: /work/handoff/probes/REPORT.md §4).
TOKEN_MISMATCH_TOLERANCE = 0.01

#: Highest concurrency level accepted: requests in flight from one client process (each
#: holds a socket; far beyond any closed-loop benchmark of one server).
MAX_CONCURRENCY = 65_536

#: `run --dry-run --pilot`: conversations per concurrency slot in each pilot cell (at
#: least one per category), so the steady-state rate and the drain tail can be fitted.
PILOT_SIZE = 3
#: Fewest conversations of one pilot cell: the low-concurrency cell's rate must not rest on
#: a handful (conversations differ in turns and lengths; at c = 1 the cell runs them serially).
PILOT_MIN_CONVERSATIONS = 32
#: Most conversations of one pilot cell (never below two per slot, so a steady state exists).
PILOT_MAX_CONVERSATIONS = 1024
