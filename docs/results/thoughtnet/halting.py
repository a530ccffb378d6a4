#!/usr/bin/env python3
"""ThoughtNet's held-out sequence accuracy per problem size at several halting thresholds, with the
mean number of steps it ran before halting: each run of run.sh (or any run directory holding a
run.json with a ThoughtNet) evaluated with `ndr eval --halt-threshold X`. Threshold 0 runs every step.
Usage: halting.py NDR_BINARY RUN_DIR... > halting.csv"""
import csv, sys

from protocols import KINDS, table

THRESHOLDS = ["0.2", "0.1", "0.05", "0.02", "0"]


def measure(ndr, run, threshold):
    """ThoughtNet's accuracy per kind and, when it halted, its mean steps per kind and compute saved."""
    kinds, rows = table([ndr, "eval", run, "--halt-threshold", threshold])
    accuracy = dict(zip(kinds, rows["ThoughtNet"][3:]))
    # "ThoughtNet: steps used (halting below 0.20, of 10): 1+1 3.8, 2+2 6.6, ...; compute saved 39%"
    line = " ".join(rows.get("ThoughtNet:", []))
    steps, saved = {}, ""
    if line:
        body, _, tail = line.split("): ", 1)[1].partition("; compute saved ")
        for part in body.split(", "):
            kind, value = part.split()
            steps[kind] = value
        saved = tail.rstrip("%")
    return accuracy, steps, saved


out = csv.writer(sys.stdout)
out.writerow(["run", "threshold"] + KINDS + ["steps " + k for k in KINDS] + ["compute saved %"])
for run_dir in sys.argv[2:]:
    for threshold in THRESHOLDS:
        accuracy, steps, saved = measure(sys.argv[1], run_dir.rstrip("/") + "/run.json", threshold)
        out.writerow([run_dir, threshold] + [accuracy.get(k, "") for k in KINDS]
                     + [steps.get(k, "") for k in KINDS] + [saved])
        sys.stdout.flush()
