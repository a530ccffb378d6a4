#!/usr/bin/env python3
"""ThoughtNet's accuracy per problem kind at every evaluation of one or more runs, with the run's seed
and urgency (the model's thoughtCost) and the mean steps run before halting over the six training
kinds. The ThoughtNet model of each run file is read (the first model of kind thoughtnet).
Usage: urgency_csv.py RUN.json [RUN.json ...] > urgency.csv"""
import csv, json, sys

KINDS = ["1+1", "2+2", "3+3", "1x1", "1x2", "2x2", "4+4", "2x3"]
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["seed", "urgency", "step"] + KINDS + ["mean_steps_train_kinds", "training_minutes"])
for path in sys.argv[1:]:
    record = json.load(open(path))
    model = next(m for m in record["models"] if m["config"].get("kind") == "thoughtnet")
    seed = record["config"]["train"]["seed"]
    urgency = model["config"].get("thoughtCost", 0)
    for e in model["history"]:
        acc = dict(zip(e["depths"], e["accuracy"]))
        steps = ""
        if e.get("haltCounts"):
            rows = [dict(zip(e["depths"], e["haltCounts"]))[d] for d in range(1, 7)]
            run = sum(s * n for row in rows for s, n in enumerate(row))
            steps = f"{run / sum(sum(row) for row in rows):.1f}"
        out.writerow([seed, f"{urgency:g}", e["step"]] + [f"{acc[d]:.3f}" for d in range(1, 9)]
                     + [steps, f'{e["elapsedSeconds"] / 60:.1f}'])
