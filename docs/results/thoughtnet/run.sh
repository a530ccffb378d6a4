#!/bin/bash
# ThoughtNet and NDR on the thoughtnet preset (multi-digit arithmetic), 3 seeds, one run at a time
# (each run trains its two models on a core each). Resumable: a finished seed is skipped.
# Usage: bash docs/results/thoughtnet/run.sh BUILD_DIR OUT_DIR
set -e
ndr="$1/app/ndr"
out="$2"
mkdir -p "$out"
for seed in ${SEEDS:-1 2 3}; do
    dir="$out/thoughtnet-seed$seed"
    [ -f "$dir/done" ] && continue
    rm -rf "$dir"
    "$ndr" train --preset thoughtnet --seed "$seed" --out "$dir" --quiet > "$dir.log" 2>&1
    touch "$dir/done"
done
