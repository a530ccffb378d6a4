#!/bin/bash
# Paired rounds of `ndr bench` of two builds: each round runs the `ndr` built before a change (a copy at
# $OLD_NDR; with $OLD_LIB, the copy of that build's engine libraries it loads, ahead of its run path),
# then the one after, so that drifts of a shared host hit both alike. Writes a CSV: round, case,
# build, steps/s, fraction of sgemm, peak MiB.
# Usage: [OLD_NDR=...] [OLD_LIB=...] bench-ab.sh ROUNDS CSV BENCH_ARGS...
rounds=$1 csv=$2
shift 2
OLD_NDR=${OLD_NDR:-/tmp/ndr-before}
NDR=${NDR:-build/release/app/ndr}
OUT=$(mktemp -d)
for round in $(seq 1 "$rounds"); do
  LD_LIBRARY_PATH=${OLD_LIB:-$LD_LIBRARY_PATH} "$OLD_NDR" bench "$@" --json "$OUT/old-$round.json" > /dev/null 2>&1
  "$NDR" bench "$@" --json "$OUT/new-$round.json" > /dev/null 2>&1
done
python3 - "$OUT" "$csv" "$rounds" <<'PY'
import json, sys
out, csv, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = ["round,case,build,steps_per_s,fraction_of_sgemm,peak_MiB"]
for r in range(1, rounds + 1):
    for b, name in (("old", "before"), ("new", "after")):
        for c in json.load(open(f"{out}/{b}-{r}.json"))["results"]:
            rows.append(f"{r},{c['case']},{name},{c['medianStepsPerSecond']:.3f},{c['fractionOfGemm']:.3f},"
                        f"{c['peakMemoryMiB']:.0f}")
open(csv, "w").write("\n".join(rows) + "\n")
PY
