"""UT + ACT on the stub and paper-forward tasks: per run, the final evaluation's accuracies and the mean
number of steps its examples ran per depth (from the evaluation's halting-step counts).

    python3 docs/results/act/summarize.py RUN_FOLDER... > docs/results/act/summary.json
"""
import json
import sys

rows = []
for folder in sys.argv[1:]:
    run = json.load(open(f"{folder}/run.json"))
    cfg = run["config"]
    for m in run["models"]:
        last = m["history"][-1]
        steps = []
        for counts in last["haltCounts"]:
            total = sum(counts)
            steps.append(round(sum(s * c for s, c in enumerate(counts)) / total, 2) if total else None)
        rows.append({"run": folder.rstrip("/").split("/")[-1], "model": m["config"]["name"],
                     "seed": cfg["train"]["seed"], "step": last["step"], "depths": last["depths"],
                     "accuracy": [round(a, 4) for a in last["accuracy"]],
                     "iid": round(last["trainAccuracy"], 4), "longer": round(last["testAccuracy"], 4),
                     "meanSteps": steps})
json.dump(rows, sys.stdout, indent=1)
print()
