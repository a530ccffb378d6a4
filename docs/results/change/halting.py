# When does each model halt, by its gates and by the change per step? For a finished table-lookup run,
# random expressions of every depth are answered with `ndr predict`; for each model and signal the
# halting step is the first step h after which every position's value (mean gate, or change
# |after - before| / |before|) stays below the threshold at every later step (core/train/halting.h),
# the run's last step when the last step is still above it.
#   python3 halting.py NDR_BINARY RUN.json [EXAMPLES_PER_DEPTH] [SEED] [GATE_THRESHOLD] [CHANGE_THRESHOLDS] > out.csv
# CHANGE_THRESHOLDS is a comma-separated list (default 0.1,0.2,0.3). Columns: model, depth, split,
# examples, final_right (the answer after the last step), signal, threshold, halted (share of examples
# halting before the last step), mean_step (halting step, the last step for those that do not halt),
# right_at_halt (the answer read after the halting step is the true one), settles (mean first step
# from which the answer stays right, over the examples right at the end).
import random, sys

from ctl_run import CtlRun

ndr, run_file = sys.argv[1], sys.argv[2]
per_depth = int(sys.argv[3]) if len(sys.argv) > 3 else 50
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
gate_threshold = float(sys.argv[5]) if len(sys.argv) > 5 else 0.375
change_thresholds = [float(x) for x in (sys.argv[6] if len(sys.argv) > 6 else "0.1,0.2,0.3").split(",")]
run = CtlRun(run_file)
split_of = run.split_of


def halting_step(rows, threshold):
    # rows[t] is step t + 1's record; the fixed point starts after the last step at or above it.
    for t in range(len(rows), 0, -1):
        if any(not (v < threshold) for v in rows[t - 1]):
            return t
    return 0


def settled_step(answers, truth):
    if answers[-1] != truth:
        return None
    s = len(answers) - 1
    while s > 0 and answers[s - 1] == truth:
        s -= 1
    return s


depths = run.depths
signals = [("gates", gate_threshold)] + [("change", c) for c in change_thresholds]
print("model,depth,split,examples,final_right,signal,threshold,halted,mean_step,right_at_halt,settles")
for d in depths:
    tally = {}
    for result in run.predictions(ndr, d, per_depth, rng):
        truth = result["answer"]  # stepAnswers name the symbols too
        for m in result["models"]:
            tr = m["trace"]
            answers, steps = tr["stepAnswers"], tr["steps"]
            t = tally.setdefault(m["name"], {"n": 0, "right": 0, "settled": 0, "settle_sum": 0, "by": {}})
            t["n"] += 1
            t["right"] += answers[-1] == truth
            s = settled_step(answers, truth)
            if s is not None:
                t["settled"] += 1
                t["settle_sum"] += s
            for signal, threshold in signals:
                rows = tr.get(signal) or []
                if not rows:
                    continue
                h = halting_step(rows, threshold)
                b = t["by"].setdefault((signal, threshold), {"halted": 0, "sum": 0, "right": 0})
                b["halted"] += h < steps
                b["sum"] += h
                b["right"] += answers[h] == truth
    for name, t in tally.items():
        settles = f"{t['settle_sum'] / t['settled']:.2f}" if t["settled"] else ""
        for (signal, threshold), b in t["by"].items():
            print(f"{name},{d},{split_of(d)},{t['n']},{t['right'] / t['n']:.3f},{signal},{threshold},"
                  f"{b['halted'] / t['n']:.3f},{b['sum'] / t['n']:.2f},{b['right'] / t['n']:.3f},{settles}")
