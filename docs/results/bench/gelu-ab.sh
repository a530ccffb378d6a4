#!/bin/bash
# Eight rounds, each running the engine before (2505852) and after the vectorised GELU of head routing in
# turn, one 2 s run per routing case (ab.sh: the two builds' lib folders copied to /tmp/old-lib and
# /tmp/new-lib). Writes gelu-ab.csv beside this script.
here=$(dirname "$0")
exec bash "$here/ab.sh" 8 "before (2505852)" "$here/gelu-ab.csv" --case "stub-routing NDR" \
  --case "stub-routing NDR top-2" --case "stub-routing Transformer" --case "stub-routing Transformer top-2" \
  --runs 1 --seconds 2
