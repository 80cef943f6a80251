"""specbench: speculative-decoding benchmarks for vLLM on SPEED-Bench."""

__version__ = "0.1.0"

#: Version of every file specbench writes into a results directory. Bump on any
#: incompatible change to `summary.json`, `requests.jsonl` or `manifest.json`.
SCHEMA_VERSION = 1
