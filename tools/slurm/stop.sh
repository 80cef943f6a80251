#!/usr/bin/env bash
# Stop the Slurm that tools/slurm/start.sh started in STATE_DIR: cancel its jobs and wait for
# them (a running job's processes outlive slurmd), then stop each daemon by its recorded PID
# and, on a several-node Slurm, every process left in a node's namespace (a server a killed
# job left behind). The node-local tmpfs goes with its namespace's last process.
#
# Usage: tools/slurm/stop.sh STATE_DIR
set -uo pipefail
export PATH=$PATH:/usr/sbin:/sbin  # the daemons live in sbin
here=$(cd "$(dirname "$0")" && pwd)

state=${1:?usage: $0 STATE_DIR}
[[ -f $state/munge.dir ]] || { echo "stop.sh: no Slurm in $state" >&2; exit 2; }
export SLURM_CONF=$state/slurm.conf

if [[ -f $state/slurm.conf && -f $state/slurmctld.pid ]] && kill -0 "$(cat "$state/slurmctld.pid")" 2>/dev/null; then
  jobs=$(squeue -h -o %i 2>/dev/null | tr '\n' ' ')
  if [[ -n ${jobs// /} ]]; then
    # shellcheck disable=SC2086
    scancel $jobs
    for _ in $(seq 1 150); do
      [[ -z $(squeue -h -t PD,R,CG,S -o %i 2>/dev/null) ]] && break
      sleep 0.2
    done
  fi
fi

stop_pid() {
  local pid=$1
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}
for file in "$state"/nodes "$state"/nodes.starting; do
  [[ -f $file ]] || continue
  while read -r name pid _; do
    stop_pid "$pid"
    bash "$here/kill-node.sh" "$state" "$name" >/dev/null 2>&1
  done <"$file"
done
[[ -f $state/slurmctld.pid ]] && stop_pid "$(cat "$state/slurmctld.pid")"
[[ -f $state/munged.pid ]] && stop_pid "$(cat "$state/munged.pid")"
munge=$(cat "$state/munge.dir")
[[ $munge == /run/specbench-munge.* ]] && rm -rf "$munge"
echo "slurm in $state stopped"
