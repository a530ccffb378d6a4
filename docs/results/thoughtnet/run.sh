#!/bin/bash
# ThoughtNet and NDR on the thoughtnet preset (multi-digit arithmetic), 3 seeds, one run at a time
# (each run trains its two models on a core each). Resumable: a finished seed is skipped. Each run's
# wall time, evaluations included, goes to its folder's wall-seconds. CONFIG= names a config file to
# train in place of the preset.
# Usage: [SEEDS="1 2"] [CONFIG=FILE] bash docs/results/thoughtnet/run.sh BUILD_DIR OUT_DIR
set -e
ndr="$1/app/ndr"
out="$2"
mkdir -p "$out"
if [ -n "$CONFIG" ]; then recipe=(--config "$CONFIG"); else recipe=(--preset thoughtnet); fi
for seed in ${SEEDS:-1 2 3}; do
    dir="$out/thoughtnet-seed$seed"
    [ -f "$dir/done" ] && continue
    rm -rf "$dir"
    start=$(date +%s)
    "$ndr" train "${recipe[@]}" --seed "$seed" --out "$dir" --quiet > "$dir.log" 2>&1
    echo $(($(date +%s) - start)) > "$dir/wall-seconds"
    touch "$dir/done"
done
