#!/usr/bin/env bash
# Start a private Slurm (munged, slurmctld, one slurmd per compute node) with its files in
# STATE_DIR (munge key and socket in a /run/specbench-munge.* folder that stop.sh removes).
#
# Usage: tools/slurm/start.sh STATE_DIR [--nodes N]
# Then: source STATE_DIR/env (sets SLURM_CONF) and use sbatch/squeue as usual.
# Stop with tools/slurm/stop.sh STATE_DIR. Needs root and Debian's slurmctld, slurmd,
# slurm-client and munge (`make slurm`). A fresh STATE_DIR per run: job ids restart at 1.
#
# One node (the default) is this machine under its own host name. With --nodes N > 1 the
# nodes are node1..nodeN in Slurm's multiple-slurmd mode (Debian's build has it: one slurmd
# per node name, each on its own port of 127.0.0.1), and each slurmd runs in its own UTS and
# mount namespace: its host name is its node name (what a job's `hostname` says) and
# STATE_DIR/local is a private tmpfs per node, a node-local disk that the other nodes and
# this machine do not see. Every other folder is shared, as a cluster's network filesystem.
# STATE_DIR/nodes lists "NAME SLURMD_PID UTS_NAMESPACE" per node: every process of a node is
# in its namespace, which stop.sh and tools/slurm/kill-node.sh (a node lost) use.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin  # the daemons live in sbin

usage="usage: $0 STATE_DIR [--nodes N]"
state=${1:?$usage}
nodes=1
if [[ ${2:-} == --nodes ]]; then
  nodes=${3:?$usage}
elif [[ -n ${2:-} ]]; then
  echo "start.sh: unknown argument ${2}; $usage" >&2
  exit 2
fi
[[ $nodes =~ ^[1-9][0-9]?$ ]] || { echo "start.sh: --nodes $nodes: allowed 1 to 99" >&2; exit 2; }
for tool in munged slurmctld slurmd sinfo runuser unshare; do
  command -v "$tool" >/dev/null || { echo "start.sh: $tool not found (run: make slurm)" >&2; exit 2; }
done
[[ $(id -u) == 0 ]] || { echo "start.sh: must run as root" >&2; exit 2; }
if [[ -e $state/slurm.conf || -e $state/munge.dir ]]; then
  echo "start.sh: $state already holds a Slurm; use a fresh folder" >&2
  exit 2
fi
mkdir -p "$state"
state=$(cd "$state" && pwd)
mkdir -p "$state"/{ctld,spool,log,local}
here=$(cd "$(dirname "$0")" && pwd)
# Whatever was started before a failure is stopped again.
trap 'bash "$here/stop.sh" "$state" >/dev/null 2>&1 || true' ERR

# munged (running as munge) refuses keys and sockets in folders others can write, and must
# reach its own folder: one of its own under /run (STATE_DIR may sit in a root-only folder
# such as pytest's), owned by munge, mode 711 so clients reach the socket.
munge=$(mktemp -d /run/specbench-munge.XXXXXX)
echo "$munge" >"$state/munge.dir"
chown munge:munge "$munge"
chmod 711 "$munge"
head -c 1024 /dev/urandom >"$munge/munge.key"
chown munge:munge "$munge/munge.key"
chmod 400 "$munge/munge.key"
socket=$munge/munge.socket
runuser -u munge -- munged --socket="$socket" --key-file="$munge/munge.key" \
  --pid-file="$munge/munged.pid" --log-file="$munge/munged.log" --seed-file="$munge/munged.seed"
cp "$munge/munged.pid" "$state/munged.pid"

# Free ports: the controller's, then one per node.
read -r ctld_port node_ports < <(
  python3 -c '
import socket, sys
sockets = [socket.socket() for _ in range(1 + int(sys.argv[1]))]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(sockets[0].getsockname()[1], ",".join(str(s.getsockname()[1]) for s in sockets[1:]))
' "$nodes"
)
IFS=, read -r -a ports <<<"$node_ports"
if ((nodes == 1)); then
  names=("$(hostname -s)")
else
  names=()
  for i in $(seq 1 "$nodes"); do names+=("node$i"); done
fi
node_list=$(IFS=,; echo "${names[*]}")
cpus=$(nproc)
memory_mb=$(awk -v n="$nodes" '/MemTotal/ {print int($2 / 1024 * 0.85 / n)}' /proc/meminfo)
node_lines=""
for i in "${!names[@]}"; do
  node_lines+="NodeName=${names[$i]} NodeHostname=${names[$i]} NodeAddr=127.0.0.1"
  node_lines+=" Port=${ports[$i]} CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN"$'\n'
done
cat >"$state/slurm.conf" <<CONF
ClusterName=specbench
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool/%n
SlurmctldPidFile=$state/slurmctld.pid.slurm
SlurmdPidFile=$state/spool/%n/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd-%n.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
# A node whose slurmd stops answering is DOWN after this many seconds (its jobs: NODE_FAIL).
SlurmdTimeout=10
MinJobAge=86400
KillWait=5
SchedulerParameters=batch_sched_delay=0
MailProg=/bin/true
${node_lines}PartitionName=debug Nodes=$node_list Default=YES MaxTime=INFINITE State=UP
CONF
echo "export SLURM_CONF=$state/slurm.conf" >"$state/env"
export SLURM_CONF=$state/slurm.conf

# -D keeps each daemon in the foreground so $! is its PID; setsid detaches it from our group.
setsid slurmctld -D -i -f "$SLURM_CONF" >"$state/log/slurmctld.out" 2>&1 </dev/null &
echo $! >"$state/slurmctld.pid"
for name in "${names[@]}"; do
  mkdir -p "$state/spool/$name"
  if ((nodes == 1)); then
    setsid slurmd -D -f "$SLURM_CONF" -N "$name" >"$state/log/slurmd-$name.out" 2>&1 </dev/null &
  else
    # unshare and sh exec in place, so $! is the slurmd; its jobs inherit the host name and
    # the private STATE_DIR/local.
    # shellcheck disable=SC2016
    setsid unshare --uts --mount --propagation private -- sh -c \
      'hostname "$1" && mount -t tmpfs -o size=64m,mode=755 node-local "$2" && exec slurmd -D -f "$3" -N "$1"' \
      sh "$name" "$state/local" "$SLURM_CONF" >"$state/log/slurmd-$name.out" 2>&1 </dev/null &
  fi
  echo "$name $!" >>"$state/nodes.starting"
done

for _ in $(seq 1 150); do
  if (($(sinfo -h -N -n "$node_list" -t idle -o %N 2>/dev/null | sort -u | wc -l) == nodes)); then
    while read -r name pid; do
      echo "$name $pid $(readlink "/proc/$pid/ns/uts")" >>"$state/nodes"
    done <"$state/nodes.starting"
    rm "$state/nodes.starting"
    echo "slurm up in $state (nodes $node_list, partition debug)"
    exit 0
  fi
  sleep 0.2
done
echo "start.sh: nodes $node_list not all idle after 30 s; logs in $state/log" >&2
tail -n 20 "$state/log/"*.log >&2 || true
bash "$here/stop.sh" "$state" >/dev/null 2>&1 || true
exit 1
