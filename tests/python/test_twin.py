"""The PyTorch twin (python/ndr_torch.py) against the engine, for every model kind.

Trains tiny runs with `ndr train`, writes them with `ndr export-weights --check-batch`, loads each
model into the twin (in double precision) and compares, on the engine's fixed batch, the logits (max
abs error <= 1e-4) and one training step's gradients of the engine's loss without dropout (max abs error
<= 1e-3 of the largest gradient of each tensor). Prints both figures per model kind.

    /usr/bin/python3 tests/python/test_twin.py --ndr build/release/app/ndr
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import torch  # noqa: E402

import ndr_torch  # noqa: E402

LOGIT_TOLERANCE = 1e-4
GRAD_TOLERANCE = 1e-3

TINY = {"dModel": 16, "heads": 4, "dFF": 24, "steps": 3, "evalSteps": 0, "dropout": 0.1,
        "attentionDropout": 0.1, "gateDropout": 0.1}


def encoder(name, **fields):
    # A Table 1 row as the base of every field; the switches and sizes given override it.
    m = dict(TINY, preset="ndr", name=name)
    m.update(fields)
    return m


NDR = dict(attention="geometric", update="copy-gate", positional="none")
# ThoughtNet's sizes under the same keys; it has no dropout.
TINY_THOUGHTNET = {k: v for k, v in TINY.items() if "ropout" not in k}
# Every model kind, four to a run (a run holds at most four models).
RUNS = {
    "softmax": ("stub", [
        encoder("transformer", attention="softmax", update="residual", positional="sinusoidal"),
        encoder("softmax-no-positions", attention="softmax", update="residual", positional="none"),
        encoder("rel", attention="softmax", update="residual", positional="relative"),
        encoder("absrel-gate", attention="softmax", update="copy-gate-tanh", positional="abs-rel"),
    ]),
    "geometric": ("stub", [
        encoder("rel-gate", attention="softmax", update="copy-gate-tanh", positional="relative"),
        encoder("ndr", **NDR),
        encoder("geom-l1", attention="geometric", update="residual", positional="none", geomNorm="l1"),
        encoder("ndr-separate-layers", sharedWeights=False, **NDR),
    ]),
    "routing": ("stub", [
        encoder("ndr-routed-masked", headRouting=True, routeTopK=2, routeDropped="masked", routeEntropy=0.05,
                **NDR),
        encoder("transformer-routed-seed-exact", attention="softmax", update="residual",
                positional="sinusoidal", headRouting=True, routeTopK=2, routeDropped="seed-exact",
                routeEntropy=0.05),
        encoder("ndr-readout-first", readout="first", **NDR),
        encoder("ndr-thought-cost", thoughtCost=0.05, **NDR),
    ]),
    "others": ("stub", [
        {"preset": "lstm", "name": "lstm", "lstmHidden": 12, "lstmEmbedding": 6, "dropout": 0.5},
        dict(TINY_THOUGHTNET, preset="thoughtnet", name="thoughtnet", operators=2, positionDims=4,
             thoughtCost=0.01),
        encoder("rel-separate-layers", attention="softmax", update="residual", positional="relative",
                sharedWeights=False),
        encoder("absrel-copy-gate", attention="softmax", update="copy-gate", positional="abs-rel"),
    ]),
    "multidigit": ("thoughtnet", [
        dict(TINY_THOUGHTNET, preset="thoughtnet", name="thoughtnet-9-readouts", operators=2, positionDims=4,
             thoughtCost=0.01),
        encoder("ndr-9-readouts", **NDR),
    ]),
    "halting": ("stub", [
        {"preset": "ut-act", "name": "ut-act", "dModel": 16, "heads": 4, "dFF": 24, "steps": 4, "dropout": 0.1,
         "attentionDropout": 0.1, "haltAt": 0.9, "ponderCost": 0.2},
        {"preset": "ut-act", "name": "ut-act-relative", "positional": "relative", "dModel": 16, "heads": 4,
         "dFF": 24, "steps": 4, "dropout": 0.1, "attentionDropout": 0.1, "haltAt": 0.9, "ponderCost": 0.2},
    ]),
}


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if r.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return r.stdout


def compare(ndr, work, run_name, preset, models):
    config = {"preset": preset, "models": models,
              "task": {"evalExamplesPerDepth": 8},
              "train": {"steps": 4, "evalInterval": 4, "batchSize": 8}}
    cfg = os.path.join(work, f"{run_name}.json")
    with open(cfg, "w") as f:
        json.dump(config, f)
    out = os.path.join(work, run_name)
    run([ndr, "train", "--config", cfg, "--out", out, "--quiet"])
    exported = os.path.join(work, run_name + "-exported")
    check = os.path.join(work, run_name + "-check.safetensors")
    run([ndr, "export-weights", os.path.join(out, "run.json"), "--out", exported, "--check-batch", check])
    ref, _ = ndr_torch.read_safetensors(check)
    tokens, lengths, targets = ref["tokens"].long(), ref["lengths"].long(), ref["targets"].long()
    rows = []
    stems = {}
    for entry in sorted(os.listdir(exported)):
        if entry.endswith(".json"):
            with open(os.path.join(exported, entry)) as f:
                stems[json.load(f)["model"]["name"]] = entry[: -len(".json")]
    for name, stem in stems.items():
        model = ndr_torch.load_model(os.path.join(exported, stem + ".json"), dtype=torch.float64)
        model.eval()
        steps = int(ref[f"{stem}/steps"][0])
        out = model(tokens, lengths, steps)
        logits = out["logits"]
        abs_logits = (logits - ref[f"{stem}/logits"].double()).abs().max().item()
        total, _ = model.net.loss(out, targets)
        model.zero_grad()
        total.backward()
        abs_loss = abs(total.item() - ref[f"{stem}/loss"][0].item())
        worst_rel, worst_tensor, worst_abs = 0.0, "", 0.0
        for pname, p in model.net.named_parameters():
            engine = ref[f"{stem}/grad/{pname}"].double().reshape(p.shape)
            twin = p.grad if p.grad is not None else torch.zeros_like(p)
            diff = (twin - engine).abs().max().item()
            scale = max(engine.abs().max().item(), 1e-6)
            if diff / scale >= worst_rel:
                worst_rel, worst_tensor, worst_abs = diff / scale, pname, diff
        rows.append((name, abs_logits, abs_loss, worst_rel, worst_tensor, worst_abs))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ndr", required=True, help="the ndr executable")
    args = ap.parse_args()
    torch.set_num_threads(1)
    failed = []
    print(f"{'model kind':32} {'logits max abs':>15} {'loss abs':>10} {'grad max rel':>13}  (tensor)")
    with tempfile.TemporaryDirectory() as work:
        for run_name, (preset, models) in RUNS.items():
            for name, abs_logits, abs_loss, rel, tensor, _ in compare(args.ndr, work, run_name, preset, models):
                print(f"{name:32} {abs_logits:15.2e} {abs_loss:10.2e} {rel:13.2e}  ({tensor})")
                if not (abs_logits <= LOGIT_TOLERANCE and rel <= GRAD_TOLERANCE and abs_loss <= LOGIT_TOLERANCE):
                    failed.append(name)
    if failed:
        sys.exit(f"FAILED: the twin differs from the engine for {', '.join(failed)}")
    print(f"all kinds within {LOGIT_TOLERANCE:g} (logits, loss) and {GRAD_TOLERANCE:g} relative (gradients)")


if __name__ == "__main__":
    main()
