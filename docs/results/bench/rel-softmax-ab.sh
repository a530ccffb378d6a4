#!/bin/bash
# Sixteen rounds, each running the engine before (572e743) and after the relative attention's softmax
# exponentials went over a whole (example, head) block in one vectorised pass, in turn, one 2 s run per
# case; "stub vanilla" runs the same code in both and shows the host's noise. The two builds' engine
# folders (build/release/lib, x86-64-v4 engine under glibc-hwcaps) were copied to /tmp/old-lib and
# /tmp/new-lib; the same `ndr` loads either through LD_LIBRARY_PATH. Writes rel-softmax-ab.csv beside
# this script.
NDR=${NDR:-build/release/app/ndr}
OUT=${OUT:-/tmp/rel-softmax-ab}
mkdir -p "$OUT"
for round in $(seq 1 16); do
  for build in old new; do
    LD_LIBRARY_PATH=/tmp/$build-lib $NDR bench --case "stub +abs/rel+gate" --case "stub vanilla" \
      --runs 1 --seconds 2 --json "$OUT/$build-$round.json" > /dev/null 2>&1
  done
done
python3 - "$OUT" "$(dirname "$0")/rel-softmax-ab.csv" <<'PY'
import json, sys
out, csv = sys.argv[1], sys.argv[2]
rows = ["round,case,build,steps_per_s,fraction_of_sgemm"]
for r in range(1, 17):
    for b, name in (("old", "before (572e743)"), ("new", "after")):
        for c in json.load(open(f"{out}/{b}-{r}.json"))["results"]:
            rows.append(f"{r},{c['case']},{name},{c['medianStepsPerSecond']:.3f},{c['fractionOfGemm']:.3f}")
open(csv, "w").write("\n".join(rows) + "\n")
PY
