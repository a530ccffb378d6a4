#!/bin/bash
# Halting at evaluation, as it goes, by the gates and by the change per step: `ndr eval` of saved runs
# on their held-out sets at several thresholds. Prints each command and its output.
#   bash docs/results/change/halting_eval.sh NDR_BINARY SIGNAL:THRESHOLDS RUN.json...
# SIGNAL:THRESHOLDS: e.g. change:0.05,0.1,0.2 or gates:0.375; several may be given before the runs.
set -euo pipefail
ndr=$1
shift
rules=()
while [[ $# -gt 0 && $1 == *:* ]]; do
    rules+=("$1")
    shift
done
for run in "$@"; do
    for rule in "${rules[@]}"; do
        signal=${rule%%:*}
        IFS=, read -ra thresholds <<< "${rule#*:}"
        for threshold in "${thresholds[@]}"; do
            echo "\$ ndr eval $run --halt-on $signal --halt-threshold $threshold"
            "$ndr" eval "$run" --halt-on "$signal" --halt-threshold "$threshold"
            echo
        done
    done
done
