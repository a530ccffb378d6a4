#!/usr/bin/env python3
"""ThoughtNet's sequence accuracy per problem size when it halts by its operators' weight (the
write-up's rule, as `ndr eval` applies it: stop after the first step at which every token's learned
operators' weight is below the threshold) and when it halts by the change per step (the inspector's
rule: after the last step that moves some token's state by the threshold or more, |after - before| /
|before|), against running every step; random problems of each size answered by `ndr predict`.
Usage: halting_change.py NDR_BINARY RUN.json [PROBLEMS_PER_SIZE] [SEED] [WEIGHT_THRESHOLD] [CHANGE_THRESHOLDS]
Columns: model, size, problems, every_step (accuracy running every step), then per rule: accuracy and
mean steps run."""
import json, random, subprocess, sys

ndr, run_file = sys.argv[1], sys.argv[2]
per_size = int(sys.argv[3]) if len(sys.argv) > 3 else 100
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
weight_threshold = float(sys.argv[5]) if len(sys.argv) > 5 else 0.2
change_thresholds = [float(x) for x in (sys.argv[6] if len(sys.argv) > 6 else "0.05,0.1,0.2").split(",")]
# (name, multiply, digits of the first number, of the second, either order): core/task/multidigit_task.cpp
SIZES = [("1+1", False, 1, 1, False), ("2+2", False, 2, 2, False), ("3+3", False, 3, 3, False),
         ("1x1", True, 1, 1, False), ("1x2", True, 1, 2, True), ("2x2", True, 2, 2, False),
         ("4+4", False, 4, 4, False), ("2x3", True, 2, 3, True)]


def number(digits):
    return rng.randint(0 if digits == 1 else 10 ** (digits - 1), 10 ** digits - 1)


def weight_stop(rows, threshold):
    # The first step s (1..steps) at which every token's weight is below the threshold, else the last.
    for s, row in enumerate(rows, start=1):
        if all(v < threshold for v in row):
            return s
    return len(rows)


def change_halt(rows, threshold):
    # After the last step that moves some token by the threshold or more (0: none does).
    for t in range(len(rows), 0, -1):
        if any(not (v < threshold) for v in rows[t - 1]):
            return t
    return 0


rules = [("weight", weight_threshold, "gates", weight_stop)] + \
        [("change", c, "change", change_halt) for c in change_thresholds]
print("model,size,problems,every_step," + ",".join(f"{n} {t} accuracy,{n} {t} steps" for n, t, _, _ in rules))
for name, multiply, a_digits, b_digits, either in SIZES:
    tally = {}
    for _ in range(per_size):
        a, b = number(a_digits), number(b_digits)
        if either and rng.random() < 0.5:
            a, b = b, a
        out = subprocess.run([ndr, "predict", run_file, f"{a}{'*' if multiply else '+'}{b}"],
                             capture_output=True, text=True, check=True)
        result = json.loads(out.stdout)
        truth = int(result["answer"])
        for m in result["models"]:
            tr = m["trace"]
            answers = [int(x) if x.isdigit() else None for x in tr["stepAnswers"]]
            t = tally.setdefault(m["name"], {"n": 0, "every": 0, "rules": {}})
            t["n"] += 1
            t["every"] += answers[-1] == truth
            for rule, threshold, field, stop in rules:
                rows = tr.get(field) or []
                if not rows:
                    continue
                s = stop(rows, threshold)
                r = t["rules"].setdefault((rule, threshold), [0, 0])
                r[0] += answers[s] == truth
                r[1] += s
    for model, t in tally.items():
        cells = []
        for rule, threshold, _, _ in rules:
            r = t["rules"].get((rule, threshold))
            cells += [f"{r[0] / t['n']:.3f}", f"{r[1] / t['n']:.2f}"] if r else ["", ""]
        print(f"{model},{name},{t['n']},{t['every'] / t['n']:.3f}," + ",".join(cells))
    sys.stdout.flush()
