#!/bin/bash
# Paired rounds of `ndr bench` on two engines. Each round runs the engine copied to /tmp/old-lib, then
# the one copied to /tmp/new-lib (each a copy of a build's lib folder: the x86-64-v4 engine under
# glibc-hwcaps and libndr-base.so), through LD_LIBRARY_PATH with the same `ndr`, so that drifts of a
# shared host hit both alike. Writes a CSV: round, case, build, steps/s, fraction of sgemm.
# Usage: ab.sh ROUNDS "BEFORE LABEL" CSV BENCH_ARGS...
rounds=$1 before=$2 csv=$3
shift 3
NDR=${NDR:-build/release/app/ndr}
OUT=$(mktemp -d)
for round in $(seq 1 "$rounds"); do
  for build in old new; do
    LD_LIBRARY_PATH=/tmp/$build-lib $NDR bench "$@" --json "$OUT/$build-$round.json" > /dev/null 2>&1
  done
done
python3 - "$OUT" "$csv" "$rounds" "$before" <<'PY'
import json, sys
out, csv, rounds, before = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rows = ["round,case,build,steps_per_s,fraction_of_sgemm"]
for r in range(1, rounds + 1):
    for b, name in (("old", before), ("new", "after")):
        for c in json.load(open(f"{out}/{b}-{r}.json"))["results"]:
            rows.append(f"{r},{c['case']},{name},{c['medianStepsPerSecond']:.3f},{c['fractionOfGemm']:.3f}")
open(csv, "w").write("\n".join(rows) + "\n")
PY
