"""Converts a checkpoint of the authors' NDR code (RobertCsordas/ndr) into an NDR Studio run folder.

Their table lookup (ctl_trafo_classifier), arithmetic (simple_arithmetic_trafo) and ListOps
(listops_trafo, variant "big") Transformer classifiers, for the variants of the paper's Table 1:
ndr_geometric (NDR), universal (Transformer), relative_universal and relative (+ rel, one shared
layer or separate layers), ndr_residual (+ rel + gate, + abs/rel + gate) and geometric_transformer
(+ geom. att.). Their tensors are renamed to the engine's (docs/design.md §7), the token embeddings
and readout rows put in the engine's vocabulary order, the task set from their arguments (table
lookup with their eleven function tables' first nine, the ones their compositions use), and the
result written as the files `ndr export-weights` writes; `ndr import-weights` makes the run folder.
A checkpoint with a detail the engine does not compute is refused with what it is.

    /usr/bin/python3 python/import_authors.py save/ctl/checkpoint/model-30000.pth --out runs/authors-ndr
    /usr/bin/python3 python/import_authors.py model.safetensors --args args.json --weights-only exported/

The first form reads their torch.save checkpoint ({"model": state dict, "run_invariants": {"args":
...}}); the second a state dict saved as safetensors with their arguments as JSON.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ndr_torch  # noqa: E402


class Refused(Exception):
    """A checkpoint the engine cannot reproduce; the message names the detail."""


# Their argument defaults (main.py and the task mixins) for every field read here.
DEFAULTS = {
    "transformer.variant": "universal", "transformer.n_heads": 4, "transformer.encoder_n_layers": 3,
    "transformer.ff_multiplier": 2.0, "transformer.attention_dropout": 0.0, "state_size": 128, "dropout": 0.0,
    "transformer_classifier.result_column": "first", "transformer_classifier.autoregressive": False,
    "trafo_classifier.out_mode": "linear", "trafo_classifier.norm_att": True, "n_test_layers": None,
    "ndr.scalar_gate": False, "ndr.abs_gate": True, "ndr.drop_gate": 0.0, "ndr.gate_size_multiplier": 1,
    "ndr.global_content_bias": True, "eos": True, "sos": True, "ctl.reversed": True, "ctl.max_depth": 5,
    "ctl.n_more_depth": 5, "ctl.n_more_depth_valid": 3, "listops.variant": "big",
    "simple_arithmetics.rpn": False, "simple_arithmetics.nnums": 10, "lr": 1e-3, "wd": 0.0,
    "batch_size": 128, "grad_clip": 1.0,
}
TASKS = {"ctl_trafo_classifier": "ctl", "simple_arithmetic_trafo": "arith", "listops_trafo": "listops"}
VARIANTS = {"ndr_geometric", "universal", "relative_universal", "relative", "ndr_residual",
            "geometric_transformer"}
NAMES = {"ndr_geometric": "NDR", "universal": "Transformer", "relative_universal": "+rel",
         "relative": "+rel (separate layers)", "geometric_transformer": "+geom"}


def flatten(args, prefix=""):
    out = {}
    for k, v in args.items():
        if isinstance(v, dict):
            out.update(flatten(v, prefix + k + "."))
        else:
            out[prefix + k] = v
    return out


def truthy(v):
    return v in (True, 1, "1", "true", "True")


# ---------------------------------------------------------------------------------------------
# Vocabularies: theirs (framework.data_structures.WordVocabulary: the words sorted, then eos and
# sos as the embedding's two last rows) and the engine's (core/task: words, then [B], [E], [PAD]).

CTL_FUNCTIONS = list("abcdefghijk")  # their eleven tables; compositions use the first nine
CTL_BITS = [f"{b:03b}" for b in range(8)]


def their_vocabulary(task):
    digits = [str(i) for i in range(10)]
    if task == "ctl":
        words, answers = sorted(CTL_BITS + CTL_FUNCTIONS), CTL_BITS
    elif task == "arith":
        words, answers = sorted(["(", ")", "+", "*"] + digits), digits
    else:
        words, answers = sorted(["]", "[MIN", "[MAX", "[MED", "[SM"] + digits), digits
    return words, answers


def engine_vocabulary(task):
    digits = [str(i) for i in range(10)]
    if task == "ctl":
        words, answers = CTL_BITS + CTL_FUNCTIONS[:9], CTL_BITS
    elif task == "arith":
        words, answers = ["(", ")", "+", "*"] + digits, digits
    else:
        words, answers = ["]", "[MIN", "[MAX", "[MED", "[SM"] + digits, digits
    return words + ["[B]", "[E]", "[PAD]"], answers


def ctl_tables():
    # Their CompositionalTableLookup.generate_data: RandomState(0x12345678), one permutation per table.
    s = np.random.RandomState(0x12345678)
    tables = [s.permutation(8).tolist() for _ in range(11)]
    return tables[:9]


# ---------------------------------------------------------------------------------------------
# Configuration


def check(args):
    """Every detail the engine cannot compute, as Refused."""
    task = args.get("task")
    if task not in TASKS:
        raise Refused(f"task {task!r}: only their Transformer classifiers are converted "
                      f"({', '.join(TASKS)}); their LSTM (ctl_rnn_classifier, ...) is not")
    variant = args["transformer.variant"]
    if variant not in VARIANTS:
        detail = ("ACT halting (a learned halting unit per position) has no counterpart in the engine, "
                  "which halts by the copy gates or the change per step" if variant.startswith("act_")
                  else "not a variant of the paper's Table 1")
        raise Refused(f"transformer.variant {variant!r}: {detail}")
    if truthy(args["transformer_classifier.autoregressive"]):
        raise Refused("transformer_classifier.autoregressive: a causal mask over the input; the engine's "
                      "encoder attends in both directions")
    if args["trafo_classifier.out_mode"] != "linear":
        raise Refused(f"trafo_classifier.out_mode {args['trafo_classifier.out_mode']!r}: the engine's readout is "
                      "a linear map of one column (out_mode linear)")
    if not (truthy(args["eos"]) and truthy(args["sos"])):
        raise Refused("eos/sos off: the engine's input is always [B] tokens [E]")
    if variant in ("ndr_geometric", "ndr_residual") and truthy(args["ndr.scalar_gate"]):
        raise Refused("ndr.scalar_gate: one gate value per position; the engine's copy gate has one per channel")
    if variant == "ndr_geometric" and int(args["ndr.gate_size_multiplier"]) != 1:
        raise Refused(f"ndr.gate_size_multiplier {args['ndr.gate_size_multiplier']}: the engine's gate hidden "
                      "layer is d_model wide")
    if TASKS[task] == "listops" and args["listops.variant"] != "big":
        raise Refused(f"listops.variant {args['listops.variant']!r}: only their generated ListOps ('big') has "
                      "the engine's vocabulary and splits")
    if TASKS[task] == "arith" and (truthy(args["simple_arithmetics.rpn"])
                                   or int(args["simple_arithmetics.nnums"]) != 10):
        raise Refused("simple_arithmetics.rpn or nnums != 10: the engine's arithmetic is infix over digits 0-9")


def task_config(task, args):
    base = {"kind": task, "symbols": 8, "functions": 9, "order": "forward", "seed": 1,
            "evalExamplesPerDepth": 1000}
    if task == "ctl":
        top = int(args["ctl.max_depth"])
        valid = int(args["ctl.n_more_depth_valid"])
        more = int(args["ctl.n_more_depth"])
        # Their "reversed" presentation `x f_d .. f_1` applies the function next to x first: the
        # engine's forward order. Not reversed, `f_1 .. f_d x` is the engine's backward order.
        base.update(order="forward" if truthy(args["ctl.reversed"]) else "backward", trainMinDepth=1,
                    trainMaxDepth=top, validMinDepth=top + 1, validMaxDepth=top + valid,
                    testMinDepth=top + valid + 1, testMaxDepth=top + more)
    else:
        # Their SimpleArithmeticDataMixin and ListopsDataMixin: train 2-6, valid 7, test 8-9.
        base.update(trainMinDepth=2, trainMaxDepth=6, validMinDepth=7, validMaxDepth=7, testMinDepth=8,
                    testMaxDepth=9)
        if task == "listops":
            base["operations"] = ["MIN", "MAX", "MED", "SM"]
    return base


def model_config(args):
    variant = args["transformer.variant"]
    d, H = int(args["state_size"]), int(args["transformer.n_heads"])
    layers = int(args["transformer.encoder_n_layers"])
    steps, eval_steps = layers, 0
    if variant == "ndr_geometric" and args.get("n_test_layers") not in (None, "none"):
        n_test = int(args["n_test_layers"])
        # The engine's evalSteps is at least its training steps; fewer test layers become its steps.
        steps, eval_steps = (layers, n_test) if n_test > layers else (n_test, 0)
    abs_gate = truthy(args["ndr.abs_gate"])
    switches = {
        "ndr_geometric": ("geometric", "copy-gate", "none"),
        "universal": ("softmax", "residual", "sinusoidal"),
        "relative_universal": ("softmax", "residual", "relative"),
        "relative": ("softmax", "residual", "relative"),
        "ndr_residual": ("softmax", "copy-gate-tanh", "abs-rel" if abs_gate else "relative"),
        "geometric_transformer": ("geometric", "residual", "none"),
    }[variant]
    l1 = variant == "geometric_transformer" or (variant == "ndr_geometric" and truthy(args["trafo_classifier.norm_att"]))
    # NDRResidual's FFN is 4 d wide whatever ff_multiplier says.
    d_ff = 4 * d if variant == "ndr_residual" else int(float(args["transformer.ff_multiplier"]) * d)
    name = NAMES.get(variant) or ("+abs/rel+gate" if abs_gate else "+rel+gate")
    return {
        "name": name, "kind": "encoder", "attention": switches[0], "update": switches[1],
        "positional": switches[2], "geomNorm": "l1" if l1 else "off", "sharedWeights": variant != "relative",
        "dModel": d, "heads": H, "dFF": d_ff, "steps": steps, "evalSteps": eval_steps,
        "dropout": float(args["dropout"]), "attentionDropout": float(args["transformer.attention_dropout"]),
        "gateDropout": float(args["ndr.drop_gate"]), "gateBiasInit": -3.0, "learningRate": 0.0,
        "weightDecay": -1.0, "lstmHidden": 200, "lstmEmbedding": 16, "operators": 4, "positionDims": 16,
        "headRouting": False, "routeTopK": 0, "routeDropped": "masked", "routeEntropy": 0.0, "thoughtCost": 0.0,
        "haltThreshold": 0.0, "haltOn": "gates",
        "readout": "first" if args["transformer_classifier.result_column"] == "first" else "last",
    }


def train_config(args, steps):
    return {"batchSize": int(args["batch_size"]), "learningRate": float(args["lr"]), "weightDecay": float(args["wd"]),
            "gradClip": float(args["grad_clip"] or 0.0), "lrDecaySteps": 0, "lrDecayFactor": 0.5, "warmupSteps": 0,
            "cosineDecay": False, "steps": max(1, steps), "evalInterval": 1000, "seed": 1, "threads": 1,
            "stopPatience": 0, "stopIid": 0.99}


# ---------------------------------------------------------------------------------------------
# Tensors


class Tensors:
    """Their state dict, each tensor taken at most once; what is left over must be known as unused."""

    def __init__(self, state):
        self.state = {k: v.detach().to(torch.float32) for k, v in state.items() if v.is_floating_point()}
        self.taken = set()

    def take(self, name):
        if name not in self.state:
            raise Refused(f"the checkpoint has no tensor {name!r} (is it of the variant its arguments name?)")
        self.taken.add(name)
        return self.state[name]

    def maybe(self, name):
        return self.take(name) if name in self.state else None

    def left(self):
        return sorted(set(self.state) - self.taken)


def split_kv(w, H):
    """Their data_to_kv rows are per head [k_h; v_h]; the engine's wkv is [k of every head; v of every head]."""
    D = w.shape[0] // (2 * H)
    w = w.view(H, 2, D, w.shape[1])
    return torch.cat([w[:, 0].reshape(H * D, -1), w[:, 1].reshape(H * D, -1)], 0)


def convert_attention(t, src, dst, kind, H, d, out):
    out[dst + "att.wq"] = t.take(src + "data_to_q.weight")
    out[dst + "att.wkv"] = split_kv(t.take(src + "data_to_kv.weight"), H)
    out[dst + "att.wo"] = t.take(src + "multi_head_merge.weight")
    if kind == "geometric":
        out[dst + "att.wqp"] = t.take(src + "data_to_qp.weight")
        out[dst + "att.direction_bias"] = t.take(src + "data_to_qp.bias")
        bias = t.maybe(src + "global_content_bias")
        out[dst + "att.content_bias"] = bias.reshape(-1) if bias is not None else torch.zeros(d)
        out[dst + "att.alpha_rho_gamma"] = torch.cat([t.take(src + "scale"), t.take(src + "scale_pos"),
                                                      t.take(src + "s_bias")])
        t.maybe(src + "pos_to_pq.weight")  # declared by their base class, unused by geometric attention
    elif kind in ("relative", "abs-rel"):
        if kind == "abs-rel":
            out[dst + "att.wag"] = t.take(src + "data_to_absgate.weight")
            out[dst + "att.abs_gate_bias"] = t.take(src + "data_to_absgate.bias")
        out[dst + "att.wr"] = t.take(src + "pos_to_pq.weight")
        for theirs, ours in (("global_content_bias", "content_bias"), ("global_pos_bias", "position_bias")):
            bias = t.maybe(src + theirs)
            out[dst + "att." + ours] = bias.reshape(-1) if bias is not None else torch.zeros(d)
        out[dst + "att.scale"] = t.take(src + "scale").reshape(1)
        t.maybe(src + "s_bias")  # declared by their RelativeAttentionBase, unused in its scores


def convert_layer(t, src, dst, variant, cfg, out):
    H, d = cfg["heads"], cfg["dModel"]
    if variant in ("ndr_geometric", "ndr_residual"):
        convert_attention(t, src + "att.", dst, "geometric" if variant == "ndr_geometric" else cfg["positional"],
                          H, d, out)
        pairs = [("p1", "ffn.w1", "ffn.b1"), ("p2", "ffn.w2", "ffn.b2"), ("g1", "gate.w1", "gate.b1"),
                 ("g2", "gate.w2", "gate.b2"), ("nmerge", "ln1.gain", "ln1.bias")]
        if variant == "ndr_geometric":
            pairs.append(("no", "ln2.gain", "ln2.bias"))
        else:
            t.maybe(src + "n1.weight")  # NDRResidual declares this layer norm but does not apply it
            t.maybe(src + "n1.bias")
    else:
        kind = {"universal": "softmax", "geometric_transformer": "geometric"}.get(variant, "relative")
        convert_attention(t, src + "self_attn.", dst, kind, H, d, out)
        pairs = [("linear1", "ffn.w1", "ffn.b1"), ("linear2", "ffn.w2", "ffn.b2"), ("norm1", "ln1.gain", "ln1.bias"),
                 ("norm2", "ln2.gain", "ln2.bias")]
    for theirs, w, b in pairs:
        out[dst + w] = t.take(src + theirs + ".weight")
        out[dst + b] = t.take(src + theirs + ".bias")


def convert(state, args, steps=0):
    """(description dict, tensors dict) of the engine's exported form."""
    args = dict(DEFAULTS, **flatten(args))
    check(args)
    task = TASKS[args["task"]]
    cfg = model_config(args)
    t = Tensors(state)
    theirs, their_answers = their_vocabulary(task)
    words, answers = engine_vocabulary(task)
    ids = {w: i for i, w in enumerate(theirs)}
    ids["[E]"], ids["[B]"] = len(theirs), len(theirs) + 1  # their encoder_eos, encoder_sos
    emb = t.take("embedding.weight")
    if emb.shape[0] != len(theirs) + 2:
        raise Refused(f"embedding.weight has {emb.shape[0]} rows; their {task} vocabulary has {len(theirs)} words "
                      "and eos and sos")
    out = {"embedding": torch.stack([emb[ids[w]] if w in ids else torch.zeros(emb.shape[1]) for w in words])}
    variant = args["transformer.variant"]
    if variant == "relative":
        for layer in range(cfg["steps"]):
            convert_layer(t, f"trafo.layers.{layer}.", f"layer{layer}.", variant, cfg, out)
    else:
        convert_layer(t, "trafo.layer.", "layer.", variant, cfg, out)
    w, b = t.take("output_map.weight"), t.take("output_map.bias")
    order = [their_answers.index(a) for a in answers]
    out["readout.w"], out["readout.b"] = w[order], b[order]
    # Buffers of their modules: the positional tables, recomputed by the engine.
    unused = [n for n in t.left() if not n.endswith("pos_encoding") and not n.endswith(".pe")]
    if unused:
        raise Refused(f"tensors {', '.join(unused)} have no place in the engine's {cfg['name']} model")
    description = {
        "format": "ndr-studio-model", "version": 1, "index": 0, "weights": None, "step": int(steps),
        "task": task_config(task, args), "model": cfg, "train": train_config(args, steps),
        "vocabulary": words, "answers": answers,
    }
    if task == "ctl":
        description["tables"] = ctl_tables()
    return description, out


def stem_of(name):
    """The engine's file stem of a model name (core/io fileStem): letters and digits, every other run
    of characters one '-'."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "model"


def write_pair(folder, stem, description, tensors):
    os.makedirs(folder, exist_ok=True)
    description = dict(description, weights=stem + ".safetensors")
    ndr_torch.write_safetensors(os.path.join(folder, stem + ".safetensors"), tensors,
                                {"format": "ndr-studio-weights", "version": "1", "model": description["model"]["name"],
                                 "kind": "encoder", "step": str(description["step"]), "converted": "import_authors.py"})
    with open(os.path.join(folder, stem + ".json"), "w") as f:
        json.dump(description, f, indent=1)
        f.write("\n")


def load_checkpoint(path, args_file):
    if path.endswith(".safetensors"):
        if not args_file:
            raise Refused("a state dict in safetensors needs its arguments: --args ARGS.json")
        state, _ = ndr_torch.read_safetensors(path)
        with open(args_file) as f:
            return state, json.load(f), 0
    ckpt = torch.load(path, map_location="cpu")
    if "model" not in ckpt:
        raise Refused(f"{path}: no 'model' state dict (their Saver writes model, run_invariants, state)")
    args = ckpt.get("run_invariants", {}).get("args")
    if args_file:
        with open(args_file) as f:
            args = json.load(f)
    if args is None:
        raise Refused(f"{path}: no run_invariants.args; give their args.json with --args")
    steps = ckpt.get("state", {}).get("iter", 0) if isinstance(ckpt.get("state"), dict) else 0
    return ckpt["model"], args, steps


def find_ndr(given):
    if given:
        return given
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(here, "..", "build", "release", "app", "ndr")
    return shutil.which("ndr") or (built if os.path.exists(built) else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint", help="their checkpoint (.pth), or a state dict as .safetensors with --args")
    ap.add_argument("--args", help="their arguments as JSON (args.json of their run folder)")
    ap.add_argument("--out", help="the NDR Studio run folder to write (through `ndr import-weights`)")
    ap.add_argument("--weights-only", metavar="DIR", help="only write <model>.json and <model>.safetensors into DIR")
    ap.add_argument("--name", help="the model's name in the run (default: its Table 1 row)")
    ap.add_argument("--ndr", help="the ndr executable (default: on PATH, or build/release/app/ndr)")
    o = ap.parse_args()
    if bool(o.out) == bool(o.weights_only):
        ap.error("give --out RUNDIR or --weights-only DIR")
    try:
        state, args, steps = load_checkpoint(o.checkpoint, o.args)
        description, tensors = convert(state, args, steps)
    except Refused as e:
        sys.exit(f"import_authors.py: cannot convert {o.checkpoint}: {e}")
    if o.name:
        description["model"]["name"] = o.name
    stem = stem_of(description["model"]["name"])
    if o.weights_only:
        write_pair(o.weights_only, stem, description, tensors)
        print(f"Wrote {stem}.json and {stem}.safetensors to {o.weights_only}")
        return
    ndr = find_ndr(o.ndr)
    if not ndr:
        sys.exit("import_authors.py: no ndr executable found; pass --ndr, or use --weights-only and "
                 "`ndr import-weights`")
    with tempfile.TemporaryDirectory() as tmp:
        write_pair(tmp, stem, description, tensors)
        r = subprocess.run([ndr, "import-weights", tmp, "--out", o.out])
        sys.exit(r.returncode)


if __name__ == "__main__":
    main()
