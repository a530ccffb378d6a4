#!/usr/bin/env python3
"""Summarises the thoughtnet runs of run.sh: per seed and model, the sequence accuracy per problem kind
(1+1, 2+2, 3+3, 1x1, 1x2, 2x2 trained; 4+4, 2x3 tested), IID and Longer at the evaluation the run
selects (the best IID: the preset has no validation split), the mean steps run before halting per kind
(ThoughtNet halts at its fixed point; NDR runs its 10 steps), the accuracy per kind running every step
(empty for a model that does not halt, and in runs recorded before evaluations measured it), the
model's training minutes and, where run.sh recorded it, the run's wall minutes (both models,
evaluations included).
Usage: summarise.py OUT_DIR > summary.csv"""
import csv, json, pathlib, sys

KINDS = ["1+1", "2+2", "3+3", "1x1", "1x2", "2x2", "4+4", "2x3"]
out = csv.writer(sys.stdout)
out.writerow(["seed", "model", "step", "iid", "longer"] + KINDS + [f"steps {k}" for k in KINDS] +
             [f"every step {k}" for k in KINDS] + ["minutes", "wall_minutes"])
for run in sorted(pathlib.Path(sys.argv[1]).glob("thoughtnet-seed*/run.json")):
    seed = run.parent.name.rsplit("-seed", 1)[1]
    record = json.loads(run.read_text())
    wall = run.parent / "wall-seconds"
    wall_minutes = f"{int(wall.read_text()) / 60:.1f}" if wall.exists() else ""
    for model in record["models"]:
        history = model["history"]
        best = history[model["bestEval"]] if model.get("bestEval", -1) >= 0 else history[-1]
        acc = dict(zip(best["depths"], best["accuracy"]))
        every = dict(zip(best["depths"], best.get("everyStepAccuracy") or []))
        steps = model["config"].get("evalSteps") or model["config"]["steps"]
        halts = best.get("haltCounts") or []
        mean_steps = {}
        for d, counts in zip(best["depths"], halts):
            n = sum(counts)
            mean_steps[d] = sum(s * c for s, c in enumerate(counts)) / n if n else steps
        out.writerow([seed, model["config"]["name"], best["step"], f'{best["trainAccuracy"]:.3f}',
                      f'{best["testAccuracy"]:.3f}'] +
                     [f"{acc.get(d, float('nan')):.3f}" for d in range(1, 9)] +
                     [f"{mean_steps.get(d, steps):.2f}" for d in range(1, 9)] +
                     [f"{every[d]:.3f}" if d in every else "" for d in range(1, 9)] +
                     [f'{history[-1]["elapsedSeconds"] / 60:.1f}', wall_minutes])
