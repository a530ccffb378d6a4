"""python/import_authors.py on the fixtures of tests/fixtures/authors/.

The raw state dicts of the authors' models (their tensor names, raw/) convert to exactly the
committed files the C++ fixture test reads; a converted model becomes a run folder that `ndr predict`
answers as their code did; and each detail the engine does not compute is refused with its name.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "authors")
CONVERTER = os.path.join(ROOT, "python", "import_authors.py")
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402

import import_authors  # noqa: E402
import ndr_torch  # noqa: E402

# Their arguments changed to a detail the engine does not compute, and what the refusal must name.
REFUSED = [
    ({"ndr.scalar_gate": True}, "ndr.scalar_gate"),
    ({"ndr.gate_size_multiplier": 2}, "gate_size_multiplier"),
    ({"transformer.variant": "act_universal"}, "ACT halting"),
    ({"transformer_classifier.autoregressive": True}, "causal mask"),
    ({"trafo_classifier.out_mode": "tied"}, "out_mode"),
    ({"sos": False}, "eos/sos"),
    ({"task": "ctl_rnn_classifier"}, "LSTM"),
    ({"task": "listops_trafo", "listops.variant": "official"}, "listops.variant"),
]


def convert(*args):
    return subprocess.run([sys.executable, CONVERTER, *args], capture_output=True, text=True, timeout=120)


def convert_here(checkpoint, args_file, folder):
    """What `import_authors.py CHECKPOINT [--args ARGS] --weights-only FOLDER` does, in this process."""
    state, args, steps = import_authors.load_checkpoint(checkpoint, args_file)
    description, tensors = import_authors.convert(state, args, steps)
    import_authors.write_pair(folder, import_authors.stem_of(description["model"]["name"]), description, tensors)


def same_files(mine_dir, committed, ignore=()):
    """None when mine_dir holds the committed files (JSON compared as data, fields in `ignore` and
    train.steps left out when given), else what differs."""
    for entry in sorted(os.listdir(committed)):
        mine, theirs = os.path.join(mine_dir, entry), os.path.join(committed, entry)
        if not os.path.exists(mine):
            return f"{entry} is missing"
        if entry.endswith(".json"):
            a, b = json.load(open(mine)), json.load(open(theirs))
            for d in (a, b):
                for key in ignore:
                    d.pop(key, None)
                    d["train"].pop("steps", None)
            if a != b:
                return f"{entry} differs"
        else:
            a, _ = ndr_torch.read_safetensors(mine)
            b, _ = ndr_torch.read_safetensors(theirs)
            if a.keys() != b.keys() or any(not torch.equal(a[k], b[k]) for k in a):
                return f"{entry} holds other tensors"
    return None


def ask(ndr, run_file, expected, name):
    for q in range(0, 200, 40):
        question = expected["questions"][q]
        p = subprocess.run([ndr, "predict", run_file, question], capture_output=True, text=True, timeout=60)
        answer = json.loads(p.stdout)["models"][0]["answer"] if p.returncode == 0 else p.stderr
        if answer != expected["answers"][q]:
            sys.exit(f"FAILED: {name}: ndr predict {question!r} gives {answer}, their code "
                     f"{expected['answers'][q]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ndr", required=True)
    o = ap.parse_args()
    raws = sorted(f[: -len(".safetensors")] for f in os.listdir(os.path.join(FIXTURES, "raw"))
                  if f.endswith(".safetensors"))
    if not raws:
        sys.exit("FAILED: no raw fixtures")
    raw_of = lambda name: os.path.join(FIXTURES, "raw", name + ".safetensors")  # noqa: E731
    args_of = lambda name: os.path.join(FIXTURES, "raw", name + ".args.json")  # noqa: E731
    with tempfile.TemporaryDirectory() as work:
        for name in raws:
            out = os.path.join(work, name)
            convert_here(raw_of(name), args_of(name), out)
            if (diff := same_files(out, os.path.join(FIXTURES, name))) is not None:
                sys.exit(f"FAILED: {name}: {diff} from the committed files")
            run_dir = os.path.join(work, name + "-run")
            r = subprocess.run([o.ndr, "import-weights", out, "--out", run_dir], capture_output=True, text=True,
                               timeout=60)
            if r.returncode != 0:
                sys.exit(f"FAILED: ndr import-weights of {name}: {r.stdout}{r.stderr}")
            expected = json.load(open(os.path.join(FIXTURES, name + ".expected.json")))
            ask(o.ndr, os.path.join(run_dir, "run.json"), expected, name)
            print(f"{name}: converts to the committed files; ndr predict answers as their code")

        # The command itself, to a run folder, from their checkpoint as their Saver writes it (torch.save
        # of the state dict, their arguments and the iteration): the same files, at that step.
        name = "ctl-ndr" if "ctl-ndr" in raws else raws[0]
        base = json.load(open(args_of(name)))
        state, _ = ndr_torch.read_safetensors(raw_of(name))
        pth = os.path.join(work, "model-500.pth")
        torch.save({"model": state, "run_invariants": {"args": base, "wandb_id": None}, "state": {"iter": 500}},
                   pth)
        r = convert(pth, "--weights-only", os.path.join(work, "from-pth"))
        if r.returncode != 0:
            sys.exit(f"FAILED: converting their checkpoint {pth}: {r.stderr}")
        if (diff := same_files(os.path.join(work, "from-pth"), os.path.join(FIXTURES, name), ["step"])) is not None:
            sys.exit(f"FAILED: their checkpoint of {name}: {diff} from the committed files")
        from_pth = os.path.join(work, "from-pth")
        description = next(f for f in os.listdir(from_pth) if f.endswith(".json"))
        if json.load(open(os.path.join(from_pth, description)))["step"] != 500:
            sys.exit("FAILED: the converted model is not at their checkpoint's iteration 500")
        run_dir = os.path.join(work, "from-pth-run")
        r = convert(pth, "--out", run_dir, "--ndr", o.ndr)
        if r.returncode != 0:
            sys.exit(f"FAILED: {name} to a run folder: {r.stdout}{r.stderr}")
        ask(o.ndr, os.path.join(run_dir, "run.json"), json.load(open(os.path.join(FIXTURES, name + ".expected.json"))),
            name)
        print(f"{name}: their torch.save checkpoint converts to the same files at step 500 and a run folder "
              "that answers as their code")

        # Refusals, on the NDR's weights: each names its detail, and nothing is written.
        for change, mention in REFUSED:
            args = os.path.join(work, "refused.json")
            with open(args, "w") as f:
                json.dump(dict(base, **change), f)
            try:
                convert_here(raw_of(name), args, os.path.join(work, "refused"))
                sys.exit(f"FAILED: {change} was not refused")
            except import_authors.Refused as e:
                if mention not in str(e) or os.path.exists(os.path.join(work, "refused")):
                    sys.exit(f"FAILED: {change} was refused without naming {mention!r}: {e}")
                print(f"refused {change}: {e}")
        change, mention = REFUSED[0]
        with open(args, "w") as f:
            json.dump(dict(base, **change), f)
        r = convert(raw_of(name), "--args", args, "--weights-only", os.path.join(work, "refused"))
        if r.returncode == 0 or mention not in r.stderr or os.path.exists(os.path.join(work, "refused")):
            sys.exit(f"FAILED: import_authors.py did not refuse {change} with an error naming {mention!r}: "
                     f"{r.stderr}")


if __name__ == "__main__":
    main()
