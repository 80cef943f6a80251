#!/usr/bin/env bash
# Take one node of a several-node test Slurm (tools/slurm/start.sh --nodes N) down at once,
# as a node that loses power: SIGKILL to every process in its UTS namespace (its slurmd, the
# job's slurmstepd and processes, the servers they started). slurmctld marks the node DOWN
# when it stops answering (SlurmdTimeout) and its jobs end NODE_FAIL.
#
# Usage: tools/slurm/kill-node.sh STATE_DIR NODE
set -uo pipefail
state=${1:?usage: $0 STATE_DIR NODE}
node=${2:?usage: $0 STATE_DIR NODE}
namespace=$(awk -v n="$node" '$1 == n {print $3}' "$state/nodes" 2>/dev/null)
if [[ -z $namespace || $namespace == "$(readlink /proc/self/ns/uts)" ]]; then
  echo "kill-node.sh: no node $node with a namespace of its own in $state/nodes" >&2
  exit 2
fi
for _ in 1 2 3; do
  # One find over /proc (not a readlink per process): the kill lands within milliseconds
  # on a loaded machine, while the cell it interrupts is still in flight.
  mapfile -t pids < <(find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/ns/uts' \
    -printf '%l %h\n' 2>/dev/null | awk -v ns="$namespace" '$1 == ns {split($2, p, "/"); print p[3]}')
  ((${#pids[@]} == 0)) && break
  kill -KILL "${pids[@]}" 2>/dev/null
  sleep 0.2
done
echo "node $node down"
