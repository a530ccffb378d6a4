#!/bin/bash
# Three rounds of `perf record -g` on the engine before (/tmp/old-lib) and after (/tmp/new-lib) the
# dropout draws came from eight streams side by side, one 6 s run per case and engine in turn. Per run:
# the samples of the training step outside Eigen's GEMM kernel and packing per sample inside them
# (gemm_share.py), and the samples whose leaf is a dropout pass per GEMM sample.
# Writes dropout-streams-share.csv beside this script.
here=$(dirname "$0")
NDR=${NDR:-build/release/app/ndr}
csv="$here/dropout-streams-share.csv"
echo "round,case,build,gemm_samples,other_samples,other_per_gemm,dropout_per_gemm" > "$csv"
tmp=$(mktemp -d)
for round in 1 2 3; do
  for case in "stub NDR" "stub vanilla"; do
    for build in old new; do
      LD_LIBRARY_PATH=/tmp/$build-lib perf record -g -o "$tmp/p.data" $NDR bench --case "$case" --runs 1 \
        --seconds 6 > /dev/null 2>&1
      perf script -i "$tmp/p.data" 2> /dev/null > "$tmp/p.txt"
      python3 - "$tmp/p.txt" "$round" "$case" "$build" "$here/gemm_share.py" >> "$csv" <<'PY'
import re, subprocess, sys
path, rnd, case, build, share = sys.argv[1:6]
first = subprocess.run([sys.executable, share], stdin=open(path), capture_output=True, text=True).stdout.split()
gemm, other = int(first[1]), int(first[3])
dropout = 0
block = []
def flush(b):
    global dropout
    if len(b) > 1 and ('Dropout' in b[1] or 'addDropped' in b[1]):
        dropout += 1
for line in open(path):
    if line.strip() == '':
        flush(block)
        block = []
    else:
        block.append(line.rstrip())
flush(block)
print(f"{rnd},{case},{'before (e1c8903)' if build == 'old' else 'after'},{gemm},{other},{other/gemm:.4f},{dropout/gemm:.4f}")
PY
    done
  done
done
rm -rf "$tmp"
