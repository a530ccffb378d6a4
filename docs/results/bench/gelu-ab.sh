#!/bin/bash
# Eight rounds, each running the engine before (2505852) and after the vectorised GELU of head routing in
# turn, one 2 s run per routing case. The two builds' engine folders (build/release/lib, x86-64-v4 engine
# under glibc-hwcaps) were copied to /tmp/old-lib and /tmp/new-lib; the same `ndr` loads either through
# LD_LIBRARY_PATH. Writes gelu-ab.csv beside this script.
NDR=${NDR:-build/release/app/ndr}
OUT=${OUT:-/tmp/gelu-ab}
mkdir -p "$OUT"
for round in $(seq 1 8); do
  for build in old new; do
    LD_LIBRARY_PATH=/tmp/$build-lib $NDR bench --case "stub-routing NDR" --case "stub-routing NDR top-2" \
      --case "stub-routing Transformer" --case "stub-routing Transformer top-2" --runs 1 --seconds 2 \
      --json "$OUT/$build-$round.json" > /dev/null 2>&1
  done
done
python3 - "$OUT" "$(dirname "$0")/gelu-ab.csv" <<'PY'
import json, sys
out, csv = sys.argv[1], sys.argv[2]
rows = ["round,case,build,steps_per_s,fraction_of_sgemm"]
for r in range(1, 9):
    for b, name in (("old", "before (2505852)"), ("new", "after")):
        for c in json.load(open(f"{out}/{b}-{r}.json"))["results"]:
            rows.append(f"{r},{c['case']},{name},{c['medianStepsPerSecond']:.3f},{c['fractionOfGemm']:.3f}")
open(csv, "w").write("\n".join(rows) + "\n")
PY
