#!/usr/bin/env bash
# Runs a tiny sweep on a real single-node Slurm cluster started in a temporary folder (its own
# slurm.conf, munge key and ports on localhost; nothing under /etc is read or written): submits it
# with `ndr sweep --engine slurm`, waits for the job array, checks `collect` against the same sweep run
# with `--engine local`, kills one array task mid-run, shows `status` and `resubmit` complete it, then
# stops every daemon it started. Usage: test_slurm_sweep.sh NDR_BINARY
set -euo pipefail
ndr=$(realpath "$1")
# The waits below are bounds, lengthened for the sanitizer builds as the Qt tests' are.
scale=${NDR_TEST_TIME_SCALE:-1}
for tool in slurmctld slurmd munged mungekey sbatch squeue scancel; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (packaging/install-deps.sh installs slurm-wlm and munge)"; exit 77; }
done

T=$(mktemp -d /tmp/ndr-slurm.XXXXXX)
chmod 755 "$T" # munged refuses paths that are not world-readable
pids=()
cleanup() {
    local rc=$?
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -f "$T/munged.pid" ] && kill "$(cat "$T/munged.pid")" 2>/dev/null || true
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    if [ $rc -ne 0 ]; then
        echo "--- slurmctld log"; tail -n 20 "$T/slurmctld.log" 2>/dev/null || true
        echo "--- slurmd log"; tail -n 20 "$T/slurmd.log" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT

# Two ports nobody listens on, in a range well away from the system's services.
free_port() {
    local p
    for _ in $(seq 1 50); do
        p=$((20000 + RANDOM % 20000))
        ss -Htln "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
    done
    echo "FAIL: no free port" >&2; exit 1
}
ctld_port=$(free_port); d_port=$(free_port)
[ "$ctld_port" != "$d_port" ] || d_port=$((ctld_port + 1))
mkdir -p "$T/state" "$T/spool"
mungekey --create --keyfile="$T/munge.key" >/dev/null 2>&1 || mungekey -c -k "$T/munge.key"
chmod 400 "$T/munge.key"
munged --socket="$T/munge.sock" --key-file="$T/munge.key" --pid-file="$T/munged.pid" \
    --log-file="$T/munged.log" --seed-file="$T/munged.seed"
cat > "$T/slurm.conf" <<EOF
ClusterName=ndrtest
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge.sock,cred_expire=10
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
JobCompType=jobcomp/filetxt
JobCompLoc=$T/jobcomp.txt
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=3600
SchedulerParameters=bf_interval=1
MailProg=/bin/true
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1024
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$T/slurm.conf"
slurmctld -D -i -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 & pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >"$T/slurmd.out" 2>&1 & pids+=($!)
# Up to a minute (times the scale): on a loaded machine the node can take a while to register (a bound, not a measurement).
for _ in $(seq 1 $((300 * scale))); do
    sinfo -h -o '%T' 2>/dev/null | grep -qE 'idle|mix|alloc' && break
    sleep 0.2
done
if ! sinfo -h -o '%T' | grep -qE 'idle|mix|alloc'; then
    echo "FAIL: the node did not come up (state: $(sinfo -h -o '%T' 2>&1))"
    for log in slurmctld.log slurmd.log slurmctld.out slurmd.out; do
        echo "--- $log"; tail -n 20 "$T/$log" 2>/dev/null
    done
    exit 1
fi

# Two configurations x two seeds: the stub task with a small NDR and a small Transformer as separate
# "presets" of one model each, a few hundred steps.
cat > "$T/a.json" <<'EOF'
{"preset": "stub", "models": [{"preset": "ndr", "name": "NDR", "dModel": 16, "heads": 2, "dFF": 32, "steps": 5,
  "evalSteps": 6, "dropout": 0.1}],
 "train": {"steps": 300, "evalInterval": 100, "batchSize": 32}, "task": {"evalExamplesPerDepth": 50}}
EOF
plan_and_submit() { # folder engine
    "$ndr" sweep --config "$T/a.json" --seeds 2 --out "$1" --engine "$2" --quiet ${3:-}
}
wait_array() { # folder
    for _ in $(seq 1 $((600 * scale))); do
        [ -z "$(squeue -h 2>/dev/null)" ] && return 0
        sleep 0.2
    done
    echo "FAIL: the job array did not finish"; squeue; exit 1
}

# 1. The same sweep through Slurm and locally: identical per-run results.
"$ndr" sweep --config "$T/a.json" --seeds 2 --out "$T/local" --quiet >"$T/local.txt"
out=$(plan_and_submit "$T/slurm" slurm)
echo "$out"
echo "$out" | grep -q "Submitted job array" || { echo "FAIL: no job id"; exit 1; }
wait_array
"$ndr" sweep status "$T/slurm" | tee "$T/status.txt"
grep -q "2 done" "$T/status.txt" || { echo "FAIL: status does not say 2 done"; exit 1; }
"$ndr" sweep collect "$T/slurm" >"$T/slurm.txt"
"$ndr" sweep collect "$T/local" >"$T/local2.txt"
diff <(grep -v "^Saved" "$T/slurm.txt") <(grep -v "^Saved" "$T/local2.txt") || { echo "FAIL: collect differs between engines"; exit 1; }
# summary.json holds every run's accuracy per depth, IID and test at full precision.
cmp "$T/slurm/summary.json" "$T/local/summary.json" || { echo "FAIL: per-run results differ between engines"; exit 1; }
echo "OK: Slurm and local sweeps give identical runs"

# 2. A task killed mid-run is resubmitted and completes.
cat > "$T/b.json" <<'EOF'
{"preset": "stub", "models": [{"preset": "ndr", "name": "NDR", "dModel": 16, "heads": 2, "dFF": 32, "steps": 5,
  "evalSteps": 6, "dropout": 0.1}],
 "train": {"steps": 4000, "evalInterval": 100, "batchSize": 32}, "task": {"evalExamplesPerDepth": 50}}
EOF
"$ndr" sweep --config "$T/b.json" --seeds 2 --out "$T/kill" --engine slurm --quiet
job=$(grep -o '"id": *"[0-9]*"' "$T/kill/slurm.json" | head -n 1 | grep -o '[0-9][0-9]*')
# Wait until task 0 has saved at least once, then kill it hard.
for _ in $(seq 1 $((600 * scale))); do
    [ -f "$T/kill/seed-1/run.json" ] && break
    sleep 0.2
done
[ -f "$T/kill/seed-1/run.json" ] || { echo "FAIL: task 0 never saved"; exit 1; }
scancel --signal=KILL "${job}_0"
wait_array
"$ndr" sweep status "$T/kill" | tee "$T/kill-status.txt"
grep -q "seed-1 (0): interrupted" "$T/kill-status.txt" || { echo "FAIL: the killed run is not reported interrupted"; exit 1; }
"$ndr" sweep resubmit "$T/kill" | tee "$T/resubmit.txt"
grep -q "Resubmitting 1 of 2 runs" "$T/resubmit.txt" || { echo "FAIL: resubmit did not pick exactly the killed run"; exit 1; }
wait_array
"$ndr" sweep status "$T/kill" | tee "$T/kill-status2.txt"
grep -q "2 done" "$T/kill-status2.txt" || { echo "FAIL: the resubmitted run did not complete"; exit 1; }
grep -q "resuming from its latest save" "$T/kill/logs/0.log" || { echo "FAIL: the resubmitted run did not resume"; exit 1; }
echo "OK: a killed array task is resubmitted, resumes and completes"
echo "1 passed, 0 failed"
