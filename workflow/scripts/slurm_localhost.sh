#!/usr/bin/env bash
# A single-node SLURM cluster on this host, from Debian's packages (apt-get install -y slurm-wlm munge),
# for testing the workflow's SLURM profile (tests/test_slurm.py). Run as root.
#
#   workflow/scripts/slurm_localhost.sh [up|status|down] [DIR]
#
#   up      (default) bring the cluster up, or, if it is up and healthy, only check it; safe to run again
#   status  exit 0 if the cluster is up (daemons alive, controller answering, node idle or busy), 1 otherwise
#   down    stop the slurmctld and slurmd this script started (and munged, if it started it)
#
# DIR (default $AGENTRL_SLURM_DIR, else /tmp/agentrl-slurm) holds everything of the cluster's:
# DIR/etc/slurm.conf, state, spool, logs and pid files. /etc/slurm/slurm.conf, where SLURM's commands
# look for their configuration, is made a symbolic link to DIR/etc/slurm.conf (SLURM_CONF is not
# enough: Snakemake's job step drops every SLURM_* variable before it calls srun inside a job); the
# script stops if /etc/slurm/slurm.conf is anything else (a real cluster's configuration), and `down`
# removes the link.
#
# The node is this host (`hostname -s`, reached at 127.0.0.1) with `nproc` CPUs and the memory of
# /proc/meminfo, in one partition `debug` (Default=YES). Accounting is off (no slurmdbd): sacct does
# not work, so Snakemake must check jobs with squeue (`--slurm-status-command squeue`), and
# MinJobAge=3600 keeps a finished job visible to squeue/scontrol for an hour. munged is the
# system's (/etc/munge/munge.key, socket under /run/munge), started if it is not running.
# Ports: SLURMCTLD_PORT (default 6817) and SLURMD_PORT (default 6818).
set -euo pipefail

ACTION=up
case "${1:-}" in
  up|status|down) ACTION=$1; shift ;;
  -h|--help) sed -n "2,23p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
DIR=${1:-${AGENTRL_SLURM_DIR:-/tmp/agentrl-slurm}}
case "$DIR" in /*) ;; *) DIR="$PWD/$DIR" ;; esac
CONF="$DIR/etc/slurm.conf"
SYSTEM_CONF=/etc/slurm/slurm.conf
export SLURM_CONF="$CONF"
NODE=$(hostname -s)
CTLD_PORT=${SLURMCTLD_PORT:-6817}
SLURMD_PORT=${SLURMD_PORT:-6818}
PARTITION=debug

say() { echo "slurm_localhost: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

# The pid in a pid file, if that process is alive.
alive() { local pid; pid=$(cat "$1" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"; }

munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

# The node's state as sinfo reports it (idle, mixed, allocated, down*, drained, ...), empty if none.
node_state() { timeout 10 sinfo -h -N -n "$NODE" -o '%T' 2>/dev/null | head -n1; }

node_usable() { case "$(node_state)" in idle|mixed|allocated|completing) return 0 ;; *) return 1 ;; esac; }

# Up: our configuration linked, both daemons alive, munge working, the controller answering and the
# node usable (idle, or running jobs). `check` then runs sinfo and a job.
healthy() {
  [ -f "$CONF" ] && [ "$(readlink "$SYSTEM_CONF" 2>/dev/null)" = "$CONF" ] || return 1
  alive "$DIR/run/slurmctld.pid" >/dev/null && alive "$DIR/run/slurmd.pid" >/dev/null || return 1
  munge_ok && timeout 10 scontrol ping >/dev/null 2>&1 && node_usable
}

stop_daemon() {  # name: stop the daemon of DIR/run/<name>.pid, waiting for it to exit
  local pid
  pid=$(alive "$DIR/run/$1.pid") || return 0
  say "stopping $1 (pid $pid)"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  kill -9 "$pid" 2>/dev/null || true
}

# /etc/slurm/slurm.conf -> DIR/etc/slurm.conf, unless it is another configuration.
link_conf() {
  if [ -L "$SYSTEM_CONF" ] && [ "$(readlink "$SYSTEM_CONF")" = "$CONF" ]; then return 0; fi
  if [ -e "$SYSTEM_CONF" ] || [ -L "$SYSTEM_CONF" ]; then
    die "$SYSTEM_CONF exists and is not a link to $CONF: this host has another SLURM configuration; not touching it"
  fi
  mkdir -p "$(dirname "$SYSTEM_CONF")"
  ln -s "$CONF" "$SYSTEM_CONF"
  say "linked $SYSTEM_CONF -> $CONF"
}

down() {
  stop_daemon slurmd
  stop_daemon slurmctld
  if [ -L "$SYSTEM_CONF" ] && [ "$(readlink "$SYSTEM_CONF")" = "$CONF" ]; then rm -f "$SYSTEM_CONF"; fi
  if [ -f "$DIR/run/munged.started-here" ]; then
    local pid
    if pid=$(alive /run/munge/munged.pid); then say "stopping munged (pid $pid)"; kill "$pid" || true; fi
    rm -f "$DIR/run/munged.started-here"
  fi
}

check_root() {
  [ "$(id -u)" -eq 0 ] || die "must run as root (it starts munged, slurmctld and slurmd and writes /etc/munge, /run/munge)"
  for cmd in munged munge unmunge slurmctld slurmd sinfo srun scontrol; do
    command -v "$cmd" >/dev/null || die "$cmd not found: install Debian's packages first: apt-get install -y slurm-wlm munge"
  done
}

start_munge() {
  if munge_ok; then return 0; fi
  say "starting munged"
  if [ ! -s /etc/munge/munge.key ]; then
    install -d -o munge -g munge -m 0700 /etc/munge
    if command -v mungekey >/dev/null; then mungekey --create --keyfile=/etc/munge/munge.key --force
    else dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none; fi
  fi
  chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
  runuser -u munge -- /usr/sbin/munged || die "munged did not start (see /var/log/munge/munged.log)"
  touch "$DIR/run/munged.started-here"
  for _ in $(seq 50); do munge_ok && return 0; sleep 0.2; done
  die "munged started but munge -n | unmunge fails (see /var/log/munge/munged.log)"
}

write_conf() {
  local cpus mem_mb
  cpus=$(nproc)
  mem_mb=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
  cat > "$CONF.new" <<EOF
# Written by workflow/scripts/slurm_localhost.sh: a single-node cluster on $NODE, accounting off.
ClusterName=agentrl
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/slurmd-%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: processes are tracked through /proc, tasks are not bound (works in containers).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
# Finished jobs stay visible to squeue/scontrol for an hour: Snakemake's status checks (squeue) and
# tests/test_slurm.py's check of every job of a run see them.
MinJobAge=3600
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
# The node's CPUs and memory are these, whatever slurmd detects (no drain on a topology mismatch).
SlurmdParameters=config_overrides
InactiveLimit=0
KillWait=30
Waittime=0
SlurmdTimeout=300
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$NODE CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=$PARTITION Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
  if [ -f "$CONF" ] && cmp -s "$CONF" "$CONF.new"; then rm -f "$CONF.new"; return 1; fi
  mv "$CONF.new" "$CONF"
  say "wrote $CONF ($NODE: $cpus CPUs, $mem_mb MB)"
}

wait_for() {  # seconds command...: retry the command until it succeeds, for at most that long
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}

up() {
  check_root
  mkdir -p "$DIR"/{etc,state,spool,log,run}
  chmod 0755 "$DIR"
  start_munge
  local changed=0
  write_conf && changed=1
  link_conf
  if [ "$changed" -eq 0 ] && healthy; then
    say "cluster already up and healthy"
  else
    # (Re)start both daemons from this configuration: a clean controller state (-c) drops jobs of
    # an earlier cluster in DIR.
    stop_daemon slurmd
    stop_daemon slurmctld
    say "starting slurmctld"
    slurmctld -c -f "$CONF" || die "slurmctld did not start (see $DIR/log/slurmctld.log)"
    wait_for 30 scontrol ping >/dev/null 2>&1 \
      || die "slurmctld does not answer scontrol ping (see $DIR/log/slurmctld.log)"
    say "starting slurmd"
    slurmd -f "$CONF" || die "slurmd did not start (see $DIR/log/slurmd.log)"
    if ! wait_for 60 node_usable; then
      # a node left DOWN or DRAINED by an earlier run: resume it once
      scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true
      wait_for 30 node_usable \
        || die "node $NODE is '$(node_state)' in sinfo, not idle (see $DIR/log/slurmd.log, $DIR/log/slurmctld.log)"
    fi
  fi
  check
}

check() {
  local out
  out=$(timeout 30 sinfo 2>&1) || die "sinfo failed: $out"
  say "sinfo:"; echo "$out" | sed 's/^/    /' >&2
  # (a busy node runs it when a CPU is free)
  out=$(timeout 600 srun -N1 -n1 -t 1 hostname 2>&1) || die "srun hostname failed or timed out: $out (see $DIR/log/)"
  [ "$out" = "$(hostname)" ] || die "srun hostname printed '$out', expected '$(hostname)'"
  say "srun hostname: $out"
}

case "$ACTION" in
  up) up ;;
  status) check_root; healthy ;;
  down) down ;;
esac
