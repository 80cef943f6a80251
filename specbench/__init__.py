"""specbench: speculative-decoding benchmarks for vLLM on SPEED-Bench."""

__version__ = "0.1.0"

#: Version of every file specbench writes into a results directory. Bump on any
#: incompatible change to `summary.json`, `requests.jsonl` or `manifest.json`.
#: 2: typed manifest (runs kept), workload key and selection in every summary.
SCHEMA_VERSION = 2
