"""Copies a sweep folder's plan and the run files of its finished runs to another folder, without
checkpoints, without the evaluations' traces (each an empty trace, as `ndr` reads run files for
summaries) and without the loss log, so that it is small enough to keep:

    python3 keep_runs.py SWEEP_DIR OUT_DIR

OUT_DIR is then a sweep folder of its own: `ndr sweep status OUT_DIR` counts the kept runs as done,
`ndr sweep collect OUT_DIR` prints their table, the Compare tab opens it, and `ndr table1 --out OUT_DIR`
(with the same plan) trains only the runs not kept."""
import glob, json, os, shutil, sys


def empty(value):
    if isinstance(value, list):
        return []
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return 0
    if isinstance(value, str):
        return ""
    if isinstance(value, dict):
        return {k: empty(v) for k, v in value.items()}
    return value


def finished(run):
    return all(m["status"].startswith("finished") for m in run["models"])


sweep, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
shutil.copyfile(os.path.join(sweep, "sweep.json"), os.path.join(out, "sweep.json"))
kept = 0
for path in sorted(glob.glob(os.path.join(sweep, "**", "run.json"), recursive=True)):
    rel = os.path.relpath(path, sweep)
    if rel.startswith("replaced-"):
        continue
    run = json.load(open(path))
    if not finished(run):
        continue
    for m in run["models"]:
        m["lossLog"] = empty(m.get("lossLog", []))
        for e in m["history"]:
            e["probe"] = empty(e["probe"])
    os.makedirs(os.path.dirname(os.path.join(out, rel)), exist_ok=True)
    with open(os.path.join(out, rel), "w") as f:
        json.dump(run, f, separators=(",", ":"))
    kept += 1
print("kept %d finished runs in %s" % (kept, out))
