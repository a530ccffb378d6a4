#!/usr/bin/env bash
# Trains CONFIG once per seed pair and leaves one run folder per pair under OUT:
#   bash tune.sh NDR OUT CONFIG "1:1 1:2 ..."     (pairs of task seed : training seed)
#   bash tune.sh NDR OUT CONFIG "11 12 13"        (task seed = training seed, as `ndr sweep` plans)
# NDR is the `ndr` program to run (e.g. build/release/app/ndr).
# A pair whose folder already holds a finished run.json is skipped, a partial one resumed, so the
# script can be run again after an interruption. JOBS=2 trains two pairs at once.
set -euo pipefail
ndr=$1 out=$2 config=$3 pairs=$4
jobs=${JOBS:-1}
mkdir -p "$out"
run_pair() {
    local pair=$1 task train dir cfg
    task=${pair%%:*}
    train=${pair##*:}
    dir="$out/t$task-s$train"
    if [ -f "$dir/run.json" ] && python3 - "$dir/run.json" <<'PY'
import json, sys
models = json.load(open(sys.argv[1]))["models"]
sys.exit(0 if all(m["status"] == "finished" for m in models) else 1)
PY
    then
        return 0
    fi
    if [ -f "$dir/run.json" ]; then
        "$ndr" train --resume "$dir" --quiet >"$dir.log" 2>&1
        return
    fi
    cfg="$out/t$task-s$train.json"
    python3 - "$config" "$task" "$train" >"$cfg" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c.setdefault("task", {})["seed"] = int(sys.argv[2])
c.setdefault("train", {})["seed"] = int(sys.argv[3])
print(json.dumps(c))
PY
    "$ndr" train --config "$cfg" --out "$dir" --quiet >"$dir.log" 2>&1
}
export -f run_pair
export out config ndr
printf '%s\n' $pairs | sed 's/^\([0-9]*\)$/\1:\1/' | xargs -P "$jobs" -I{} bash -c 'run_pair {}'
