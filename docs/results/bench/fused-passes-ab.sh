#!/bin/bash
# Ten rounds, each running the engine before (58b2b13) and after the encoder layer's fused passes (the
# attention's dropout drawn in the pass that adds it to the stream; b2's and [b1 | bg1]'s gradients
# summed in the passes that compute them; LN1's input gradient written into dx and da as it is
# computed), in turn, one 2 s run per case; "thoughtnet ThoughtNet" runs the same code in both and
# shows the host's noise (ab.sh: the two builds' lib folders copied to /tmp/old-lib and /tmp/new-lib).
# Writes fused-passes-ab.csv beside this script.
here=$(dirname "$0")
exec bash "$here/ab.sh" 10 "before (58b2b13)" "$here/fused-passes-ab.csv" --case "stub NDR" \
  --case "stub vanilla" --case "d128 NDR" --case "d128 vanilla" --case "thoughtnet ThoughtNet" --runs 1 --seconds 2
