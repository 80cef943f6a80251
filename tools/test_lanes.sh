#!/bin/sh
# `make test`: two pytest lanes side by side on the machine's cores, each with its own
# --durations and log; exits 1 when either lane failed (each lane's exit code is printed).
#   lane vllm:  the tests that start a real vLLM (marker `vllm`): mostly one busy core,
#               a vLLM start at a time (tests/e2e/vllm_pool.py)
#   lane other: everything else (unit, emulator e2e, slurm)
# Extra arguments go to both lanes (`make coverage` passes --cov); each lane writes its own
# coverage file (.coverage.<lane>), combined afterwards.
# Usage: tools/test_lanes.sh LOG_DIR PYTEST [PYTEST_ARGS...]
set -u
logs=$1
pytest=$2
shift 2
rm -rf "$logs" && mkdir -p "$logs"
start=$(date +%s)
COVERAGE_FILE=.coverage.vllm "$pytest" -q -ra --durations=20 -m vllm "$@" \
  >"$logs/vllm.log" 2>&1 &
vllm_pid=$!
COVERAGE_FILE=.coverage.other "$pytest" -q -ra --durations=20 -m "not vllm" "$@" \
  >"$logs/other.log" 2>&1
other=$?
wait "$vllm_pid"
vllm=$?
for lane in other vllm; do
  echo "=================== lane $lane ($logs/$lane.log) ==================="
  cat "$logs/$lane.log"
done
echo "lanes: other exit $other, vllm exit $vllm; wall $(( $(date +%s) - start )) s"
[ "$other" -eq 0 ] && [ "$vllm" -eq 0 ]
