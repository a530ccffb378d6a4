# One-operation ListOps questions (dependency depth 2): each operation over 2-5 random digits, answered
# by a run's models with `ndr predict`; accuracy per operation and model. The weights are the best
# validation's unless the fourth argument says final.
import json, random, statistics, subprocess, sys
run, per_op, ndr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
weights = sys.argv[4] if len(sys.argv) > 4 else "best"
rng = random.Random(1)
def truth(op, xs):
    if op == "MAX": return max(xs)
    if op == "MIN": return min(xs)
    if op == "SM": return sum(xs) % 10
    s = sorted(xs); n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) // 2
right = {}
for op in ["MAX", "MIN", "MED", "SM"]:
    for _ in range(per_op):
        xs = [rng.randrange(10) for _ in range(rng.randint(2, 5))]
        expr = "[" + op + " " + " ".join(map(str, xs)) + " ]"
        out = subprocess.run([ndr, "predict", run, expr, "--weights", weights], capture_output=True, text=True)
        for m in json.loads(out.stdout)["models"]:
            right.setdefault((m["name"], op), []).append(int(m["answer"]) == truth(op, xs))
for (model, op), v in sorted(right.items()):
    print(f"{model:12s} {op:4s} {sum(v)}/{len(v)} = {sum(v)/len(v):.2f}")
