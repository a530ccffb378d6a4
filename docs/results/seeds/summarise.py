"""One row per run folder and model: the seeds, the step each split first reached 0.99, and the
figures at the last and at the best-validation evaluation (the latest where the task has no
validation split), from the run.json files under the folders given."""
import csv, glob, json, sys

TARGET = 0.99


def first_step(history, key):
    return next((h["step"] for h in history if h[key] >= TARGET), "")


out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow("folder,run,model,taskSeed,trainSeed,steps,ended,firstIid0.99,firstLonger0.99,lastIid,lastLonger,"
             "bestStep,bestIid,bestLonger,trainMinutes".split(","))
for top in sys.argv[1:]:
    for f in sorted(glob.glob(top + "/**/run.json", recursive=True)):
        run = json.load(open(f))
        cfg = run["config"]
        for m in run["models"]:
            h = m["history"]
            if not h:
                continue
            best = h[m["bestEval"]] if m["bestEval"] >= 0 else h[-1]
            ended = "early stop" if m["stepsDone"] < cfg["train"]["steps"] else "all steps"
            if not m["status"].startswith("finished"):
                ended = m["status"]
            out.writerow([top, f[len(top):].strip("/").rsplit("/", 1)[0], m["config"]["name"], cfg["task"]["seed"],
                          cfg["train"]["seed"], m["stepsDone"], ended, first_step(h, "trainAccuracy"),
                          first_step(h, "testAccuracy"), "%.4f" % h[-1]["trainAccuracy"],
                          "%.4f" % h[-1]["testAccuracy"], best["step"], "%.4f" % best["trainAccuracy"],
                          "%.4f" % best["testAccuracy"], "%.1f" % (h[-1]["elapsedSeconds"] / 60)])
