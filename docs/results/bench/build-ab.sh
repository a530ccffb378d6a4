#!/bin/bash
# Two builds' `ndr` on the five bench cases, in turn for ROUNDS rounds (old, new, old, new, ...), each
# run 3 x 2 s; prints per case the medians over every run of steps/s and of the fraction of sgemm, and
# the new/old ratio of the step-rate medians.
# Usage: build-ab.sh OLD_NDR NEW_NDR ROUNDS > summary.json
old=$1 new=$2 rounds=$3
out=$(mktemp -d)
cases=(--case "stub NDR" --case "stub vanilla" --case "d128 NDR" --case "d128 vanilla" --case "paper NDR (2 threads)")
for i in $(seq 1 "$rounds"); do
  "$old" bench "${cases[@]}" --runs 3 --seconds 2 --json "$out/old-$i.json" > /dev/null 2>&1
  "$new" bench "${cases[@]}" --runs 3 --seconds 2 --json "$out/new-$i.json" > /dev/null 2>&1
done
python3 - "$out" <<'PY'
import glob, json, statistics as st, sys
rows = {}
for side in ("old", "new"):
    for f in sorted(glob.glob(f"{sys.argv[1]}/{side}-*.json")):
        for r in json.load(open(f))["results"]:
            e = rows.setdefault(r["case"], {s: {"sps": [], "frac": []} for s in ("old", "new")})
            e[side]["sps"] += r["stepsPerSecond"]
            e[side]["frac"] += r["fractionPerRun"]
out = []
for case, e in rows.items():
    o, n = st.median(e["old"]["sps"]), st.median(e["new"]["sps"])
    out.append({"case": case, "runs": len(e["new"]["sps"]), "oldStepsPerSecond": round(o, 2),
                "newStepsPerSecond": round(n, 2), "ratio": round(n / o, 3),
                "oldFraction": round(st.median(e["old"]["frac"]), 3),
                "newFraction": round(st.median(e["new"]["frac"]), 3)})
print(json.dumps(out, indent=1))
PY
