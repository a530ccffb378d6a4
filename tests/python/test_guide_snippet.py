"""The Python of docs/guide/weights.md, run exactly as the page shows it.

Trains a tiny run of the paper's table lookup with `ndr train`, exports it into `exported/` with
`ndr export-weights`, then runs every ```python block of the page, in order, as one script in that
folder, and checks that the answers it prints are those `ndr predict` gives.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PAGE = os.path.join(ROOT, "docs", "guide", "weights.md")


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, **kw)
    if r.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ndr", required=True)
    args = ap.parse_args()
    if os.sep in args.ndr:  # the commands run in a temporary folder
        args.ndr = os.path.abspath(args.ndr)
    with open(PAGE) as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    if not blocks:
        sys.exit(f"FAILED: no ```python block in {PAGE}")
    with tempfile.TemporaryDirectory() as work:
        config = {"preset": "paper-forward", "task": {"evalExamplesPerDepth": 16},
                  "train": {"steps": 30, "evalInterval": 30, "batchSize": 16},
                  "models": [{"dModel": 16, "heads": 2, "dFF": 32, "steps": 4, "evalSteps": 0}]}
        with open(os.path.join(work, "config.json"), "w") as f:
            json.dump(config, f)
        run([args.ndr, "train", "--config", "config.json", "--out", "run", "--quiet"], cwd=work)
        run([args.ndr, "export-weights", "run/run.json", "--out", "exported"], cwd=work)
        with open(os.path.join(work, "snippet.py"), "w") as f:
            f.write("\n".join(blocks))
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        out = run([sys.executable, "snippet.py"], cwd=work, env=env)
        print(out, end="")
        answers = re.findall(r"^(.+?) -> (\S+)", out, re.M)
        if not answers:
            sys.exit("FAILED: the snippet printed no answer (question -> answer)")
        for question, answer in answers:
            predicted = json.loads(run([args.ndr, "predict", "run/run.json", question], cwd=work))
            engine = predicted["models"][0]["answer"]
            if engine != answer:
                sys.exit(f"FAILED: {question}: the snippet answers {answer}, ndr predict {engine}")
        print(f"the page's {len(blocks)} Python block(s) ran; {len(answers)} answers equal ndr predict's")


if __name__ == "__main__":
    main()
