#!/bin/bash
# Ten rounds, each running the engine before (97e0710) and after (405f1cd) the small products' change in
# turn, one 2 s run per case. The two x86-64-v4 engines were built in the release tree, one per commit of
# core/nn/small_products.h, and copied with libndr-base.so into /tmp/old-lib/glibc-hwcaps/x86-64-v4 and
# /tmp/new-lib/glibc-hwcaps/x86-64-v4; the same `ndr` loads either through LD_LIBRARY_PATH.
NDR=${NDR:-build/release/app/ndr}
OUT=${OUT:-/tmp/abres}
mkdir -p "$OUT"
for round in $(seq 1 10); do
  for build in old new; do
    LD_LIBRARY_PATH=/tmp/$build-lib $NDR bench --case "stub NDR" --case "stub vanilla" --case "d128 NDR" --case "listops NDR" --runs 1 --seconds 2 --json "$OUT/r2-$build-$round.json" > /dev/null 2>&1
  done
done
