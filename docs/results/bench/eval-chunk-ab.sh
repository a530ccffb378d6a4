#!/bin/bash
# Paired rounds of evaluations with passes of 512 examples (the engine copied to /tmp/old-lib) and of
# 128 (/tmp/new-lib), each a copy of a build's lib folder, run in turn through LD_LIBRARY_PATH with the
# same `ndr`. Per round and engine: the stub's time to accuracy from seed 1 (`ndr bench --to-accuracy`:
# its evaluations' seconds, measured inside the program, and its peak memory), then `ndr eval` of a
# 20-step `paper-forward` NDR on two threads and of a 20-step `listops` NDR (wall seconds of the whole
# command, building the held-out sets included, and peak resident memory).
# Usage: eval-chunk-ab.sh ROUNDS CSV
rounds=$1 csv=$2
NDR=${NDR:-build/release/app/ndr}
OUT=$(mktemp -d)
echo '{"preset":"paper-forward","models":[{}],"train":{"steps":20,"evalInterval":20,"threads":2}}' > "$OUT/pf.json"
echo '{"preset":"listops","models":[{}],"train":{"steps":20,"evalInterval":20}}' > "$OUT/lo.json"
for run in pf lo; do
  LD_LIBRARY_PATH=/tmp/new-lib $NDR train --config "$OUT/$run.json" --out "$OUT/$run" -q > /dev/null 2>&1
done
echo "round,measure,build,seconds,peak_MiB" > "$csv"
for round in $(seq 1 "$rounds"); do
  for build in old new; do
    name=$([ $build = old ] && echo 512 || echo 128)
    LD_LIBRARY_PATH=/tmp/$build-lib $NDR bench --to-accuracy --preset stub --seeds 1 \
      --json "$OUT/tta-$build-$round.json" > /dev/null 2>&1
    python3 - "$OUT/tta-$build-$round.json" "$round" "$name" >> "$csv" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(f"{sys.argv[2]},stub evaluations,{sys.argv[3]},{r['evalSeconds']:.2f},{r['peakMemoryMiB']:.0f}")
print(f"{sys.argv[2]},stub time to accuracy,{sys.argv[3]},{r['seconds']:.2f},{r['peakMemoryMiB']:.0f}")
PY
    for run in pf lo; do
      t=$( { LD_LIBRARY_PATH=/tmp/$build-lib /usr/bin/time -f "%e %M" $NDR eval "$OUT/$run/run.json" > /dev/null; } 2>&1 | tail -1)
      label=$([ $run = pf ] && echo "paper-forward eval (2 threads)" || echo "listops eval")
      echo "$round,$label,$name,${t% *},$(( ${t#* } / 1024 ))" >> "$csv"
    done
  done
done
