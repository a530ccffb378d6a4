#!/bin/bash
# Six rounds, each running the engine before (96e78df) and after the ReLU passes were written as
# selects with unconditional products (the FFN's ReLU and dropout in one pass; its gradient with b1's
# sums), in turn, one 2 s run per case; "thoughtnet ThoughtNet" (no ReLU pass) shows the host's noise.
# With NDR_ISA=x86-64 in the environment both run their baseline (SSE2) engines. ab.sh: the two
# builds' lib folders copied to /tmp/old-lib and /tmp/new-lib. Writes the CSV named by $1.
here=$(dirname "$0")
exec bash "$here/ab.sh" "${ROUNDS:-6}" "before (96e78df)" "$1" --case "stub NDR" --case "stub vanilla" \
  --case "d128 NDR" --case "d128 vanilla" --case "thoughtnet ThoughtNet" --runs 1 --seconds 2
