#!/bin/bash
# Eight rounds, each running the engine before (e1c8903) and after the dropout draws came from eight
# xoshiro256** streams stepped side by side (docs/design.md §6), in turn, one 2 s run per case
# (ab.sh: the two builds' lib folders copied to /tmp/old-lib and /tmp/new-lib).
# Writes dropout-streams-ab.csv beside this script.
here=$(dirname "$0")
exec bash "$here/ab.sh" 8 "before (e1c8903)" "$here/dropout-streams-ab.csv" --case "stub NDR" \
  --case "stub vanilla" --case "d128 NDR" --case "d128 vanilla" --runs 1 --seconds 2
