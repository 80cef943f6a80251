#!/bin/sh
# `make test`: six pytest lanes side by side, then a seventh alone, each with its own --durations and log;
# exits 1 when any lane failed (each lane's exit code is printed). Most tests wait on an
# emulator's steps, a scheduler or a subprocess rather than compute, so six lanes share
# two cores without slowing one another much.
#   lane vllm:   the tests that start a real vLLM (marker `vllm`): CPU-bound, a vLLM start
#                at a time (tests/e2e/vllm_pool.py)
#   lane slurm:  the tests on the real two-node Slurm (marker `slurm`): one Slurm instance
#   lanes e2e-a, e2e-b, e2e-c: the other end-to-end tests (emulator, Chromium), tests/e2e
#                split by file name into thirds of about equal time (on a fresh machine:
#                a = bench, campaign, cuts, faults ~500 s; b = gate, lossless, report,
#                resume ~420 s; c = the cuts pipeline and test_p* (pilot, plan, precision,
#                preflight) ~400 s)
#   lane unit:   everything else
#   lane quiet:  after the others, alone: the tests that time the emulator's steps or
#                compare throughput between two runs (marker `quiet`), which the six
#                lanes' bursty load skews (a short early-stopped cell measured 4.6x the
#                rate of a long one beside it; a 20 ms step's median gap read 15.5 ms)
# Extra arguments go to every lane (`make coverage` passes --cov); each lane writes its own
# coverage file (.coverage.<lane>), combined afterwards.
# Usage: tools/test_lanes.sh LOG_DIR PYTEST [PYTEST_ARGS...]
set -u
logs=$1
pytest=$2
shift 2
rm -rf "$logs" && mkdir -p "$logs"
start=$(date +%s)
lane() {  # lane NAME [PYTEST_ARGS...]: in the background, exit code to LOG_DIR/NAME.rc
  name=$1
  shift
  (
    COVERAGE_FILE=.coverage.$name "$pytest" -q -ra --durations=20 "$@" \
      >"$logs/$name.log" 2>&1
    echo $? >"$logs/$name.rc"
    echo "lane $name done after $(( $(date +%s) - start )) s" >>"$logs/$name.log"
  ) &
}
emulated="not vllm and not slurm and not quiet"
lane vllm -m "vllm" "$@"
lane slurm -m "slurm" "$@"
pipeline=tests/e2e/test_cuts_pipeline_emulator.py
# shellcheck disable=SC2046 # the file names, one word each
lane e2e-a -m "$emulated" $(ls tests/e2e/test_[a-f]*.py | grep -vx $pipeline) "$@"
# The gate's tests compare throughput and latency across reruns, so they come last in
# their lane, once the vLLM lane (the demo starts three servers at once) is done.
lane e2e-b -m "$emulated" tests/e2e/test_[h-o]*.py tests/e2e/test_[q-z]*.py \
  tests/e2e/test_g*.py "$@"
lane e2e-c -m "$emulated" $pipeline tests/e2e/test_p*.py "$@"
lane unit -m "$emulated" --ignore=tests/e2e "$@"
wait
lane quiet -m "quiet" tests "$@"
wait
status=0
summary=""
for name in unit e2e-a e2e-b e2e-c slurm vllm quiet; do
  echo "=================== lane $name ($logs/$name.log) ==================="
  cat "$logs/$name.log"
  rc=$(cat "$logs/$name.rc" 2>/dev/null || echo 1)
  summary="$summary $name exit $rc;"
  [ "$rc" -eq 0 ] || status=1
done
echo "lanes:$summary wall $(( $(date +%s) - start )) s"
exit "$status"
