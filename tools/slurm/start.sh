#!/usr/bin/env bash
# Start a private one-node Slurm (munged, slurmctld, slurmd) with its files in STATE_DIR
# (munge key and socket in a /run/specbench-munge.* folder that stop.sh removes).
#
# Usage: tools/slurm/start.sh STATE_DIR
# Then: source STATE_DIR/env (sets SLURM_CONF) and use sbatch/squeue as usual.
# Stop with tools/slurm/stop.sh STATE_DIR. Needs root and Debian's slurmctld, slurmd,
# slurm-client and munge (`make slurm`). A fresh STATE_DIR per run: job ids restart at 1.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin  # the daemons live in sbin

state=${1:?usage: $0 STATE_DIR}
for tool in munged slurmctld slurmd sinfo runuser; do
  command -v "$tool" >/dev/null || { echo "start.sh: $tool not found (run: make slurm)" >&2; exit 2; }
done
[[ $(id -u) == 0 ]] || { echo "start.sh: must run as root" >&2; exit 2; }
if [[ -e $state/slurm.conf || -e $state/munge.dir ]]; then
  echo "start.sh: $state already holds a Slurm; use a fresh folder" >&2
  exit 2
fi
mkdir -p "$state"
state=$(cd "$state" && pwd)
mkdir -p "$state"/{ctld,spool,log}
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

read -r ctld_port slurmd_port < <(python3 - <<'PY'
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in sockets))
PY
)
node=$(hostname -s)
cpus=$(nproc)
memory_mb=$(awk '/MemTotal/ {print int($2 / 1024 * 0.85)}' /proc/meminfo)
cat >"$state/slurm.conf" <<CONF
ClusterName=specbench
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid.slurm
SlurmdPidFile=$state/slurmd.pid.slurm
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=86400
KillWait=5
SchedulerParameters=batch_sched_delay=0
MailProg=/bin/true
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
echo "export SLURM_CONF=$state/slurm.conf" >"$state/env"
export SLURM_CONF=$state/slurm.conf

# -D keeps each daemon in the foreground so $! is its PID; setsid detaches it from our group.
setsid slurmctld -D -i -f "$SLURM_CONF" >"$state/log/slurmctld.out" 2>&1 </dev/null &
echo $! >"$state/slurmctld.pid"
setsid slurmd -D -f "$SLURM_CONF" -N "$node" >"$state/log/slurmd.out" 2>&1 </dev/null &
echo $! >"$state/slurmd.pid"

for _ in $(seq 1 100); do
  if [[ $(sinfo -h -n "$node" -o %t 2>/dev/null) == idle ]]; then
    echo "slurm up in $state (node $node, partition debug)"
    exit 0
  fi
  sleep 0.2
done
echo "start.sh: node $node not idle after 20 s; logs in $state/log" >&2
tail -n 20 "$state/log/"*.log >&2 || true
bash "$here/stop.sh" "$state" >/dev/null 2>&1 || true
exit 1
