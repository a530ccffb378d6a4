#!/bin/bash
# Usage: split-ab.sh BEFORE AFTER, each a build folder (build/release) of the two commits.
# Alternates the builds so that drifts of the shared machine hit each alike.
C=(--case "paper NDR (2 threads)" --case "d128 NDR" --runs 3 --seconds 2)
for r in 1 2 3; do
  LD_LIBRARY_PATH="$1/lib" "$1/app/ndr" bench "${C[@]}" --json before-$r.json > before-$r.txt 2>&1
  LD_LIBRARY_PATH="$2/lib" "$2/app/ndr" bench "${C[@]}" --json after-$r.json > after-$r.txt 2>&1
done
