#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for testing the sbatch scripts and the submitit launcher.
#
#   sudo apt-get install -y slurm-wlm munge         # Debian / Ubuntu
#   slurm/local_cluster.sh start                     # prints the SLURM_CONF line to export
#   export SLURM_CONF=/tmp/robust-mrc-slurm/slurm.conf
#   sinfo; sbatch ...; python -m pytest -m slurm tests/trainer/test_slurm.py
#   slurm/local_cluster.sh stop
#
# Everything lives in $ROBUST_MRC_SLURM_DIR (default /tmp/robust-mrc-slurm): slurm.conf, state,
# spool, logs, pid files, and the munge socket. One node (this host, all its CPUs), one partition
# `debug`, no cgroups (ProctrackType=proctrack/linuxproc, TaskPlugin=task/none), no accounting,
# job requeue allowed. The daemons run as the calling user (root in a container); munged
# needs a key readable by that user (/etc/munge/munge.key is copied when readable, else one is made).
set -euo pipefail

DIR="${ROBUST_MRC_SLURM_DIR:-/tmp/robust-mrc-slurm}"
CONF="$DIR/slurm.conf"
MUNGE_SOCKET="$DIR/munge/munge.socket"

die() { echo "local_cluster.sh: $*" >&2; exit 1; }

need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found: install slurm-wlm and munge (apt-get install -y slurm-wlm munge)"; }

write_conf() {
    local host cpus mem user
    host="$(hostname -s)"
    cpus="$(nproc)"
    mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
    user="$(id -un)"
    mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/munge"
    cat >"$CONF" <<EOF
# written by slurm/local_cluster.sh
ClusterName=robustmrc
SlurmctldHost=$host
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobRequeue=1
KillWait=10
MinJobAge=3600
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
}

start_munge() {
    if [ -S "$MUNGE_SOCKET" ] && munge -S "$MUNGE_SOCKET" -n </dev/null >/dev/null 2>&1; then
        return
    fi
    local key="$DIR/munge/munge.key"
    if [ ! -s "$key" ]; then
        if [ -r /etc/munge/munge.key ]; then
            cp /etc/munge/munge.key "$key"
        else
            mungekey --create --keyfile="$key" 2>/dev/null || dd if=/dev/urandom of="$key" bs=1 count=1024 status=none
        fi
        chmod 600 "$key"
    fi
    chmod 700 "$DIR/munge"
    munged --force --socket="$MUNGE_SOCKET" --key-file="$key" \
        --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed" \
        || die "munged failed to start (see $DIR/log/munged.log)"
}

start() {
    need slurmctld; need slurmd; need munged; need sinfo
    if [ -f "$DIR/slurmctld.pid" ] && kill -0 "$(cat "$DIR/slurmctld.pid")" 2>/dev/null; then
        echo "already running; export SLURM_CONF=$CONF"; return
    fi
    write_conf
    start_munge
    export SLURM_CONF="$CONF"
    slurmctld -f "$CONF" || die "slurmctld failed (see $DIR/log/slurmctld.log)"
    slurmd -f "$CONF" || die "slurmd failed (see $DIR/log/slurmd.log)"
    for _ in $(seq 1 30); do
        if sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
            echo "SLURM is up: $(sinfo -h -o '%P %D %T %C')"
            echo "export SLURM_CONF=$CONF"
            return
        fi
        sleep 1
    done
    scontrol update NodeName="$(hostname -s)" State=RESUME >/dev/null 2>&1 || true
    sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && { echo "export SLURM_CONF=$CONF"; return; }
    die "the node did not come up: $(sinfo -h -o '%T %E' 2>&1); logs in $DIR/log"
}

stop_pidfile() {
    local file="$1"
    [ -f "$file" ] || return 0
    local pid; pid="$(cat "$file")"
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid"
        for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    fi
    rm -f "$file"
}

stop() {
    stop_pidfile "$DIR/slurmd.pid"
    stop_pidfile "$DIR/slurmctld.pid"
    stop_pidfile "$DIR/munge/munged.pid"
    echo "stopped (state kept in $DIR; rm -rf it for a fresh cluster)"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) SLURM_CONF="$CONF" sinfo && SLURM_CONF="$CONF" squeue ;;
    conf) echo "$CONF" ;;
    *) echo "usage: $0 start|stop|status|conf" >&2; exit 2 ;;
esac
