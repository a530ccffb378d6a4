#!/bin/bash
# Twelve rounds, each running the engine before (d88825d) and after the geometric attention's score
# gradient took each row's window sums from one prefix sum (no difference array), in turn, one 2 s run
# per case; "stub vanilla" runs the same code in both and shows the host's noise (ab.sh: the two builds'
# lib folders copied to /tmp/old-lib and /tmp/new-lib). Writes score-grad-ab.csv beside this script.
here=$(dirname "$0")
exec bash "$here/ab.sh" 12 "before (d88825d)" "$here/score-grad-ab.csv" --case "stub NDR" \
  --case "listops NDR" --case "stub vanilla" --runs 1 --seconds 2
