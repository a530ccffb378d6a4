#!/bin/bash
# Alternates the builds so that drifts of the shared machine hit each alike.
C=(--case "stub NDR" --case "d128 NDR" --case "paper NDR (2 threads)" --runs 3 --seconds 2)
for r in 1 2 3; do
  /work/main/build/native/app/ndr bench "${C[@]}" --json native-$r.json > native-$r.txt 2>&1
  /usr/bin/ndr bench "${C[@]}" --json deb-$r.json > deb-$r.txt 2>&1
  NDR_ISA=x86-64 /usr/bin/ndr bench "${C[@]}" --json base-$r.json > base-$r.txt 2>&1
done
/usr/bin/ndr bench --case "stub-routing NDR" --case "stub-routing NDR top-2" --case "stub-routing Transformer" --case "stub-routing Transformer top-2" --runs 5 --seconds 2 --json routing.json > routing.txt 2>&1
echo done > bench.done
