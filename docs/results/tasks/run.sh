#!/bin/bash
# NDR and the Transformer on the arith and listops presets, 3 seeds each, one run at a time (each run
# trains its two models on a core each). Resumable: a finished seed is skipped. Writes summary.csv.
# Usage: bash docs/results/tasks/run.sh BUILD_DIR OUT_DIR
set -e
ndr="$1/app/ndr"
out="$2"
mkdir -p "$out"
for seed in ${SEEDS:-1 2 3}; do
    for preset in arith listops; do
        dir="$out/$preset-seed$seed"
        [ -f "$dir/done" ] && continue
        rm -rf "$dir"
        "$ndr" train --preset "$preset" --seed "$seed" --out "$dir" --quiet > "$dir.log" 2>&1
        touch "$dir/done"
    done
done
