#!/usr/bin/env python3
"""ThoughtNet's sequence accuracy per problem kind halting at its threshold and running every step, and
its mean steps run before halting per kind, at one evaluation step of each run given (a run of lr1e-3.json or any run.json whose first model is a
ThoughtNet), one row per run, then the median over the runs.
Usage: at_step.py STEP RUN.json... > FILE.csv"""
import csv, json, statistics, sys

KINDS = ["1+1", "2+2", "3+3", "1x1", "1x2", "2x2", "4+4", "2x3"]


def row(path, step):
    """The accuracy per kind halting, running every step, and the mean steps per kind at the evaluation
    of `step` in `path`."""
    model = json.load(open(path))["models"][0]
    entry = next((e for e in model["history"] if e["step"] == step), None)
    if entry is None:
        sys.exit(f"{path}: no evaluation at step {step}")
    acc = dict(zip(entry["depths"], entry["accuracy"]))
    every = dict(zip(entry["depths"], entry["everyStepAccuracy"]))
    steps = {}
    for d, counts in zip(entry["depths"], entry.get("haltCounts") or []):
        n = sum(counts)
        steps[d] = sum(s * c for s, c in enumerate(counts)) / n
    return [acc[d] for d in range(1, 9)] + [every[d] for d in range(1, 9)] + [steps[d] for d in range(1, 9)]


step = int(sys.argv[1])
rows = [(path, row(path, step)) for path in sys.argv[2:]]
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["run", "step"] + KINDS + [f"every step {k}" for k in KINDS] + [f"steps {k}" for k in KINDS])


def formatted(values):
    return [f"{v:.3f}" for v in values[:16]] + [f"{v:.2f}" for v in values[16:]]


for path, values in rows:
    out.writerow([path, step] + formatted(values))
medians = [statistics.median(column) for column in zip(*(values for _, values in rows))]
out.writerow(["median", step] + formatted(medians))
