#!/bin/bash
# Sixteen rounds, each running the engine before (572e743) and after the relative attention's softmax
# exponentials went over a whole (example, head) block in one vectorised pass, in turn, one 2 s run per
# case; "stub vanilla" runs the same code in both and shows the host's noise (ab.sh: the two builds' lib
# folders copied to /tmp/old-lib and /tmp/new-lib). Writes rel-softmax-ab.csv beside this script.
here=$(dirname "$0")
exec bash "$here/ab.sh" 16 "before (572e743)" "$here/rel-softmax-ab.csv" --case "stub +abs/rel+gate" \
  --case "stub vanilla" --runs 1 --seconds 2
