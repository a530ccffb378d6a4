#!/usr/bin/env python3
"""Summarises the arith and listops runs of run.sh: per run and model, the accuracy per depth, IID
(the training depths' held-out sets) and Longer (the test depths) at the best validation evaluation,
the model's training minutes and, where run.sh recorded it, the run's wall minutes (both models,
evaluations included). Usage: summarise.py OUT_DIR > summary.csv"""
import csv, json, pathlib, sys

out = csv.writer(sys.stdout)
out.writerow(["preset", "seed", "model", "step", "iid", "valid", "longer", "d2", "d3", "d4", "d5", "d6", "d7",
              "d8", "d9", "minutes", "wall_minutes"])
for run in sorted(pathlib.Path(sys.argv[1]).glob("*-seed*/run.json")):
    preset, seed = run.parent.name.rsplit("-seed", 1)
    record = json.loads(run.read_text())
    wall = run.parent / "wall-seconds"
    wall_minutes = f"{int(wall.read_text()) / 60:.1f}" if wall.exists() else ""
    for model in record["models"]:
        history = model["history"]
        best = history[model["bestEval"]] if model.get("bestEval", -1) >= 0 else history[-1]
        acc = dict(zip(best["depths"], best["accuracy"]))
        out.writerow([preset, seed, model["config"]["name"], best["step"], f'{best["trainAccuracy"]:.3f}',
                      f'{best["validAccuracy"]:.3f}', f'{best["testAccuracy"]:.3f}'] +
                     [f"{acc.get(d, float('nan')):.3f}" for d in range(2, 10)] +
                     [f'{history[-1]["elapsedSeconds"] / 60:.1f}', wall_minutes])
