# At which step does each model move the column of each function? For a finished table-lookup run
# (forward order), random expressions of every depth are answered with `ndr predict`, and for every
# model and function k (at position k + 1 of `[B] symbol f1 .. fd [E]`) the step whose change of that
# column (Trace::change, |after - before| / |before|) is largest is compared with k: one function per
# step, in order, puts function k's largest change at step k.
#   python3 alignment.py NDR_BINARY RUN.json [EXAMPLES_PER_DEPTH] [SEED] > out.csv
# Columns: model, depth, split, examples, right (the readout after the model's steps), functions,
# at_step_k (share of function columns whose largest change is at step k), mean_offset (mean of
# largest-change step - k), e_step (mean step of the largest change of [E]).
import random, sys

from ctl_run import CtlRun

ndr, run_file = sys.argv[1], sys.argv[2]
per_depth = int(sys.argv[3]) if len(sys.argv) > 3 else 30
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
run = CtlRun(run_file)
split_of = run.split_of
assert run.task.get("order", "forward") == "forward", "forward order only"
depths = run.depths
print("model,depth,split,examples,right,functions,at_step_k,mean_offset,e_step")
for d in depths:
    tally = {}
    for result in run.predictions(ndr, d, per_depth, rng):
        for m in result["models"]:
            change = m["trace"]["change"]  # [step][position]
            t = tally.setdefault(m["name"], {"n": 0, "right": 0, "cols": 0, "at": 0, "off": 0, "e": 0})
            t["n"] += 1
            t["right"] += bool(m["correct"])
            for k in range(1, d + 1):
                column = [row[k + 1] for row in change]
                step = 1 + max(range(len(column)), key=column.__getitem__)
                t["cols"] += 1
                t["at"] += step == k
                t["off"] += step - k
            e = [row[d + 2] for row in change]
            t["e"] += 1 + max(range(len(e)), key=e.__getitem__)
    for name, t in tally.items():
        print(f"{name},{d},{split_of(d)},{t['n']},{t['right'] / t['n']:.3f},{t['cols']},"
              f"{t['at'] / t['cols']:.3f},{t['off'] / t['cols']:.2f},{t['e'] / t['n']:.2f}")
