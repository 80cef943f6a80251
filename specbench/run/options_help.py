"""What each run option means, written once: `RunOptions`'s field descriptions and the
CLI's `--help` (`specbench/cli/options.py`) both read these lines.

Plain constants, no imports: the CLI reads them to draw `--help` without importing pydantic.
"""

OUTPUT = "Results directory (created; resumable)."
FORCE = "Measure complete cells again."
FAIL_FAST = "Stop at the first failed cell."
MAX_RESTARTS = "Restarts of a dead server before giving up on its cells."
VLLM_BIN = "vllm executable (else $SPECBENCH_VLLM, then PATH)."
READY_TIMEOUT_S = "Seconds to wait for a started server to be ready."
API_KEY_ENV = "Environment variable holding the API key."
SERVERS = "Run only this server config (repeatable)."
WORKLOADS = "Run only this workload key (repeatable)."
PLAN = "Measure only a plan's cells (advise --plan --write FILE), its K sweep grown."
POINTS = "Run only these (server, workload, concurrency) points: a planned search's cells."
ENDPOINTS = "Attach to this running server instead of starting one (repeatable)."
GPUS_UNCHECKED = (
    "Start vLLM servers even where no GPU tool (amd-smi, rocm-smi, nvidia-smi) answers, "
    "e.g. in a container without them: their GPUs go unchecked, and the dry run and the "
    "run say so in one line."
)
ACCEPT_SERVER_VALUES = (
    "An attached server that is not its suite entry (model, speculation, K): measure it "
    "and record its values instead of refusing."
)
