# What the scripts of this folder read from a table-lookup run file: its depths and their splits, and
# random expressions of a depth in the run's notation (a symbol, then functions a, b, ...), answered
# by `ndr predict`.
import json
import subprocess


class CtlRun:
    def __init__(self, run_file):
        self.run_file = run_file
        self.task = json.load(open(run_file))["config"]["task"]
        self.letters = [chr(ord("a") + i) for i in range(self.task["functions"])]
        width = max(1, (self.task["symbols"] - 1).bit_length())
        self.symbols = [format(s, "0%db" % width) for s in range(self.task["symbols"])]
        self.depths = sorted({d for d in range(1, self.task["testMaxDepth"] + 1) if self.split_of(d)})

    def split_of(self, d):
        for name, lo, hi in (("train", "trainMinDepth", "trainMaxDepth"),
                             ("valid", "validMinDepth", "validMaxDepth"),
                             ("test", "testMinDepth", "testMaxDepth")):
            if self.task[lo] <= d <= self.task[hi]:
                return name
        return None

    def expression(self, d, rng):
        return " ".join([rng.choice(self.symbols)] + [rng.choice(self.letters) for _ in range(d)])

    def predictions(self, ndr, d, count, rng):
        """`ndr predict`'s answer (parsed JSON) to each of `count` random expressions of depth d."""
        for _ in range(count):
            out = subprocess.run([ndr, "predict", self.run_file, self.expression(d, rng)],
                                 capture_output=True, text=True, check=True)
            yield json.loads(out.stdout)
