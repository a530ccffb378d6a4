#!/bin/bash
# NDR and the Transformer on the arith and listops presets, 3 seeds each, one run at a time (each run
# trains its two models on a core each). Resumable: a finished seed is skipped. Each run's wall time,
# evaluations included, goes to its folder's wall-seconds. PRESETS= lists preset names or config
# files (a name ending in .json); a config file's runs are named after the file.
# Usage: [SEEDS="1 2"] [PRESETS="arith FILE.json"] bash docs/results/tasks/run.sh BUILD_DIR OUT_DIR
set -e
ndr="$1/app/ndr"
out="$2"
mkdir -p "$out"
for seed in ${SEEDS:-1 2 3}; do
    for preset in ${PRESETS:-arith listops}; do
        if [[ "$preset" == *.json ]]; then
            name=$(basename "$preset" .json)
            recipe=(--config "$preset")
        else
            name="$preset"
            recipe=(--preset "$preset")
        fi
        dir="$out/$name-seed$seed"
        [ -f "$dir/done" ] && continue
        rm -rf "$dir"
        start=$(date +%s)
        "$ndr" train "${recipe[@]}" --seed "$seed" --out "$dir" --quiet > "$dir.log" 2>&1
        echo $(($(date +%s) - start)) > "$dir/wall-seconds"
        touch "$dir/done"
    done
done
