"""PyTorch twin of NDR Studio's models: loads what `ndr export-weights` writes.

Every model kind of the engine (docs/design.md §2) as a torch.nn.Module whose state_dict keys are the
engine's tensor names (docs/design.md §7): the encoder with softmax attention (sinusoidal, no,
relative or abs/rel positions) or geometric attention, a residual, copy-gate or tanh copy-gate update,
one shared layer or separate ones, head routing (masked or seed-exact) and a readout at [E] or [B];
the LSTM; ThoughtNet. Each follows the engine's formulas, so its logits and, through autograd, its
gradients equal the engine's (tests/python/test_twin.py checks both).

    import ndr_torch
    model = ndr_torch.load_model("exported/ndr.json")
    print(model.answer("101 b d h"))

Only the standard library and torch are needed; safetensors files are read and written here.
Halting at evaluation (a model's haltThreshold) is not applied: the twin runs every step.
"""

import json
import math
import os
import re
import struct

import torch
import torch.nn.functional as F

# ---------------------------------------------------------------------------------------------
# safetensors


def read_safetensors(path):
    """The tensors (name -> float32 tensor) and the metadata of a safetensors file of F32 tensors."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: truncated, {len(data)} bytes")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise ValueError(f"{path}: the header length {n} runs beyond the end of the file")
    header = json.loads(data[8 : 8 + n].decode("utf-8"))
    body = memoryview(data)[8 + n :]
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, entry in header.items():
        if entry["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name!r} is {entry['dtype']}; only F32 is read")
        begin, end = entry["data_offsets"]
        shape = entry["shape"]
        count = math.prod(shape)
        if end - begin != 4 * count or end > len(body):
            raise ValueError(f"{path}: tensor {name!r} does not fit its byte range")
        flat = torch.frombuffer(bytearray(body[begin:end]), dtype=torch.float32) if count else torch.zeros(0)
        tensors[name] = flat.reshape(shape).clone()
    return tensors, metadata


def write_safetensors(path, tensors, metadata=None):
    """Writes name -> tensor (any float dtype, written as F32) with optional string metadata."""
    header, blobs, offset = {}, [], 0
    for name in tensors:
        t = tensors[name].detach().to(torch.float32).contiguous().cpu()
        raw = t.numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# Tokenizer


class Tokenizer:
    """Token ids of questions as the run's task writes them, from the exported description."""

    def __init__(self, description):
        self.task = description["task"]
        self.kind = self.task.get("kind", "ctl")
        self.vocabulary = list(description["vocabulary"])
        self.answers = list(description["answers"])
        self.readouts = int(description.get("readouts", 9 if self.kind == "multidigit" else 1))
        self.ids = {name: i for i, name in enumerate(self.vocabulary)}
        self.pad = self.ids["[PAD]"]
        self.tables = description.get("tables")

    def words(self, text):
        if self.kind == "ctl":
            return text.split()
        if self.kind == "arith":
            return [c for c in text if not c.isspace()]
        if self.kind == "listops":
            return re.findall(r"\]|[^\s\]]+", text)
        m = re.fullmatch(r"(\d{1,4})([+*])(\d{1,4})", re.sub(r"\s", "", text))
        if not m:
            raise ValueError(f"{text!r}: expected two numbers of at most 4 digits around + or *")
        return list(m.group(1).zfill(4) + m.group(2) + m.group(3).zfill(4))

    def encode(self, text):
        """Token ids of one question: [B] tokens [E] (multi-digit arithmetic: its nine tokens)."""
        ids = []
        for w in self.words(text):
            if w not in self.ids or w.startswith("[") and w in ("[B]", "[E]", "[PAD]"):
                raise ValueError(f"{text!r}: unknown token {w!r}; the vocabulary is {self.vocabulary}")
            ids.append(self.ids[w])
        if self.readouts == 1:
            ids = [self.ids["[B]"]] + ids + [self.ids["[E]"]]
        return ids

    def batch(self, texts):
        """(tokens (B, T) padded with [PAD], lengths (B)) of several questions."""
        rows = [self.encode(t) for t in texts]
        T = max(len(r) for r in rows)
        tokens = torch.full((len(rows), T), self.pad, dtype=torch.long)
        for b, r in enumerate(rows):
            tokens[b, : len(r)] = torch.tensor(r)
        return tokens, torch.tensor([len(r) for r in rows])

    def true_answer(self, text):
        """The right answer of a table lookup question, from the run's function tables."""
        if self.kind != "ctl":
            raise ValueError("true_answer: table lookup only")
        words = self.words(text)
        if self.task["order"] == "backward":
            words = list(reversed(words))
        x = self.answers.index(words[0])
        S = self.task["symbols"]
        for w in words[1:]:
            x = self.tables[self.vocabulary.index(w) - S][x]
        return self.answers[x]


# ---------------------------------------------------------------------------------------------
# Building blocks


def sinusoid_table(positions, channels, dtype):
    """(len(positions), channels): sin(p f) on even channels, cos(p f) on odd, f = 10000^(-2m/C)."""
    c = torch.arange(channels, dtype=torch.float64)
    freq = torch.exp(-math.log(10000.0) * (c - c % 2) / channels)
    angle = torch.as_tensor(positions, dtype=torch.float64)[:, None] * freq[None, :]
    table = torch.where(c % 2 == 0, torch.sin(angle), torch.cos(angle))
    return table.to(dtype)


def parameter(*shape):
    return torch.nn.Parameter(torch.zeros(*shape))


class Linear(torch.nn.Module):
    """y = x W^T (+ b), W (out, in): the engine's (rows, cols) layout."""

    def __init__(self, rows, cols, bias, weight_name="w", bias_name="b"):
        super().__init__()
        self.weight_name, self.bias_name = weight_name, bias_name
        self.register_parameter(weight_name, parameter(rows, cols))
        if bias:
            self.register_parameter(bias_name, parameter(rows))
        else:
            self.register_parameter(bias_name, None)

    def forward(self, x):
        return F.linear(x, getattr(self, self.weight_name), getattr(self, self.bias_name))


class LayerNorm(torch.nn.Module):
    """eps 1e-5, biased variance, learned gain and bias (`gain`, `bias`)."""

    def __init__(self, channels):
        super().__init__()
        self.gain = parameter(channels)
        self.bias = parameter(channels)

    def forward(self, x):
        return F.layer_norm(x, x.shape[-1:], self.gain, self.bias, 1e-5)


def heads_of(x, H):
    """(B, T, C) -> (B, H, T, D)."""
    B, T, C = x.shape
    return x.view(B, T, H, C // H).transpose(1, 2)


def merge_heads(x, route=None):
    """(B, H, T, D) -> (B, T, H*D), each head scaled by its routing weight (B, T, H) first."""
    B, H, T, D = x.shape
    x = x.transpose(1, 2)
    if route is not None:
        x = x * route[..., None]
    return x.reshape(B, T, H * D)


def key_dropout(x, p, training):
    return F.dropout(x, p, training) if p > 0 else x


class SoftmaxAttention(torch.nn.Module):
    """Scaled dot-product attention without biases: wq, wkv = [Wk; Wv], wo."""

    def __init__(self, C, H, dropout=0.0):
        super().__init__()
        self.H, self.dropout = H, dropout
        self.wq = parameter(C, C)
        self.wkv = parameter(2 * C, C)
        self.wo = parameter(C, C)

    def forward(self, x, valid, route=None):
        C, H = x.shape[-1], self.H
        q = heads_of(F.linear(x, self.wq), H)
        k, v = (heads_of(t, H) for t in F.linear(x, self.wkv).split(C, -1))
        scores = q @ k.transpose(-1, -2) / math.sqrt(C // H)
        scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
        att = scores.softmax(-1)
        applied = key_dropout(att, self.dropout, self.training)
        return F.linear(merge_heads(applied @ v, route), self.wo), att


class GeometricAttention(torch.nn.Module):
    """Directional geometric attention (docs/design.md §2): wq, wkv, wqp (2H rows: prefer left, prefer
    right per head), content_bias, direction_bias, alpha_rho_gamma, wo."""

    def __init__(self, C, H, l1=False, dropout=0.0):
        super().__init__()
        self.H, self.l1, self.dropout = H, l1, dropout
        self.wq = parameter(C, C)
        self.wkv = parameter(2 * C, C)
        self.wqp = parameter(2 * H, C)
        self.content_bias = parameter(C)
        self.direction_bias = parameter(2 * H)
        self.alpha_rho_gamma = parameter(3)
        self.wo = parameter(C, C)
        self._window = {}

    def window(self, T, device):
        """For query i and key j, the inclusive range lo..hi of keys closer to i than j."""
        if T not in self._window:
            i = torch.arange(T)[:, None]
            j = torch.arange(T)[None, :]
            d = (j - i).abs()
            lo = (i - d + 1).clamp(min=0)
            hi = torch.where(j > i, i + d - 1, i + d).clamp(max=T - 1)
            self._window[T] = (lo, hi)
        lo, hi = self._window[T]
        return lo.to(device), hi.to(device)

    def forward(self, x, valid, route=None):
        B, T, C = x.shape
        H = self.H
        q = heads_of(F.linear(x, self.wq, self.content_bias), H)
        k, v = (heads_of(t, H) for t in F.linear(x, self.wkv).split(C, -1))
        k = key_dropout(k, self.dropout, self.training)
        qp = F.linear(x, self.wqp, self.direction_bias).view(B, T, H, 2).permute(0, 2, 1, 3)  # (B, H, T, 2)
        alpha, rho, gamma = self.alpha_rho_gamma
        i = torch.arange(T, device=x.device)[:, None]
        j = torch.arange(T, device=x.device)[None, :]
        direction = torch.where(j > i, qp[..., 1:2], qp[..., 0:1])  # (B, H, T, T): f_i right, b_i left
        s = alpha * (q @ k.transpose(-1, -2)) + rho * direction + gamma
        keep = valid[:, None, None, :] & (i != j)
        log_p = torch.where(keep, F.logsigmoid(s), torch.full_like(s, float("-inf")))
        log_q = torch.where(keep, F.logsigmoid(-s), torch.zeros_like(s))
        # sum of log(1 - P_ik) over the keys k closer to i than j: a window of a prefix sum along j
        prefix = F.pad(log_q.cumsum(-1), (1, 0))
        lo, hi = self.window(T, x.device)
        closer = prefix.gather(-1, (hi + 1).expand(B, H, T, T)) - prefix.gather(-1, lo.expand(B, H, T, T))
        att = torch.exp(log_p + closer)
        if self.l1:
            att = att / (att.sum(-1, keepdim=True) + 1e-6)
        return F.linear(merge_heads(att @ v, route), self.wo), att


class RelativeAttention(torch.nn.Module):
    """Transformer-XL-style relative attention, optionally gated with the absolute key position:
    wq, wkv, [wag, abs_gate_bias], wr, content_bias (u), position_bias (v), scale, wo."""

    def __init__(self, C, H, abs_rel=False, dropout=0.0):
        super().__init__()
        self.H, self.abs_rel, self.dropout = H, abs_rel, dropout
        self.wq = parameter(C, C)
        self.wkv = parameter(2 * C, C)
        if abs_rel:
            self.wag = parameter(H, C)
            self.abs_gate_bias = parameter(H)
        self.wr = parameter(C, C)
        self.content_bias = parameter(C)
        self.position_bias = parameter(C)
        self.scale = parameter(1)
        self.wo = parameter(C, C)

    def forward(self, x, valid, route=None):
        B, T, C = x.shape
        H, D = self.H, C // self.H
        q = heads_of(F.linear(x, self.wq), H)
        k, v = (heads_of(t, H) for t in F.linear(x, self.wkv).split(C, -1))
        k = key_dropout(k, self.dropout, self.training)
        pe = sinusoid_table(range(-(T - 1), T), C, x.dtype).to(x.device)  # offsets -(T-1)..T-1
        r = key_dropout(F.linear(pe, self.wr), self.dropout, self.training)  # (2T-1, C)
        r = r.view(2 * T - 1, H, D).transpose(0, 1)  # (H, 2T-1, D)
        content = (q + self.content_bias.view(H, 1, D)) @ k.transpose(-1, -2)
        pos = (q + self.position_bias.view(H, 1, D)) @ r.transpose(-1, -2)[None]  # (B, H, T, 2T-1)
        i = torch.arange(T, device=x.device)[:, None]
        j = torch.arange(T, device=x.device)[None, :]
        relative = pos.gather(-1, (j - i + T - 1).expand(B, H, T, T))
        if self.abs_rel:
            gate = torch.sigmoid(F.linear(x, self.wag, self.abs_gate_bias)).permute(0, 2, 1)[..., None]
            absolute = pos.gather(-1, (j + T - 1).expand(B, H, T, T))
            relative = gate * relative + (1 - gate) * absolute
        scores = self.scale * (content + relative)
        scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
        att = scores.softmax(-1)
        return F.linear(merge_heads(att @ v, route), self.wo), att


class HeadRouter(torch.nn.Module):
    """Per token: logits = W2 GELU(W1 x + b1) + b2; the top k kept (ties to the lower head); weights a
    softmax over the kept heads (masked) or over all with dropped logits at 0 (seed-exact)."""

    def __init__(self, C, H, top_k, dropped):
        super().__init__()
        hidden = max(1, C // 2)
        self.H, self.k, self.seed_exact = H, (H if top_k <= 0 or top_k >= H else top_k), dropped == "seed-exact"
        self.w1 = parameter(hidden, C)
        self.b1 = parameter(hidden)
        self.w2 = parameter(H, hidden)
        self.b2 = parameter(H)

    def forward(self, x):
        logits = F.linear(F.gelu(F.linear(x, self.w1, self.b1)), self.w2, self.b2)
        order = torch.sort(logits.detach(), dim=-1, descending=True, stable=True).indices
        kept = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, order[..., : self.k], True)
        if self.seed_exact:
            return (logits * kept).softmax(-1)
        return logits.masked_fill(~kept, float("-inf")).softmax(-1)


def route_entropy(weights, valid):
    """Mean over the real tokens of -sum_h w log(w + 1e-8)."""
    e = -(weights * torch.log(weights + 1e-8)).sum(-1)
    return e[valid].mean()


# ---------------------------------------------------------------------------------------------
# The encoder


class EncoderLayer(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C, H, Fd = cfg["dModel"], cfg["heads"], cfg["dFF"]
        self.update = cfg["update"]
        self.gated = self.update in ("copy-gate", "copy-gate-tanh")
        self.dropout, self.gate_dropout = cfg["dropout"], cfg["gateDropout"]
        if cfg["attention"] == "geometric":
            self.att = GeometricAttention(C, H, cfg["geomNorm"] == "l1", cfg["attentionDropout"])
        elif cfg["positional"] in ("relative", "abs-rel"):
            self.att = RelativeAttention(C, H, cfg["positional"] == "abs-rel", cfg["attentionDropout"])
        else:
            self.att = SoftmaxAttention(C, H, cfg["attentionDropout"])
        self.route = (
            HeadRouter(C, H, cfg.get("routeTopK", 0), cfg.get("routeDropped", "masked"))
            if cfg.get("headRouting")
            else None
        )
        self.ln1 = LayerNorm(C)
        self.ffn = torch.nn.Module()
        self.ffn.w1, self.ffn.b1 = parameter(Fd, C), parameter(Fd)
        self.ffn.w2, self.ffn.b2 = parameter(C, Fd), parameter(C)
        if self.update != "copy-gate-tanh":
            self.ln2 = LayerNorm(C)
        if self.gated:
            self.gate = torch.nn.Module()
            self.gate.w1, self.gate.b1 = parameter(C, C), parameter(C)
            self.gate.w2, self.gate.b2 = parameter(C, C), parameter(C)

    def drop(self, x):
        return F.dropout(x, self.dropout, self.training) if self.dropout > 0 else x

    def forward(self, x, valid):
        """(out, attention (B, H, T, T), routing weights or None, gates (B, T, C) or None)."""
        w = self.route(x) if self.route is not None else None
        a, att = self.att(x, valid, w)
        z = self.ln1(x + self.drop(a))
        ff = F.linear(self.drop(torch.relu(F.linear(z, self.ffn.w1, self.ffn.b1))), self.ffn.w2, self.ffn.b2)
        if not self.gated:
            return self.ln2(z + self.drop(ff)), att, w, None
        u = torch.tanh(ff) if self.update == "copy-gate-tanh" else self.ln2(ff)
        gh = self.drop(torch.relu(F.linear(z, self.gate.w1, self.gate.b1)))
        g = torch.sigmoid(F.linear(gh, self.gate.w2, self.gate.b2))
        applied = g
        if self.training and self.gate_dropout > 0:
            keep = (torch.rand(g.shape[:-1], device=g.device) >= self.gate_dropout).to(g.dtype)
            applied = g * keep[..., None]
        return x + applied * (u - x), att, w, g


class ReadoutMixin:
    """The rows a model's answers are read from, and the mean cross-entropy."""

    def read_rows(self, h, lengths):
        B = h.shape[0]
        if self.readouts > 1:
            return h[:, : self.readouts].reshape(B * self.readouts, h.shape[-1])
        at = torch.zeros_like(lengths) if self.read_first else lengths - 1
        return h[torch.arange(B, device=h.device), at]

    def loss(self, out, targets):
        """The engine's training loss: mean cross-entropy + routing entropy and thought cost terms."""
        ce = F.cross_entropy(out["logits"], targets)
        total = ce
        if out.get("route_entropy") is not None:
            total = total + self.cfg.get("routeEntropy", 0) * out["route_entropy"]
        if out.get("thought_cost") is not None:
            total = total + self.cfg.get("thoughtCost", 0) * out["thought_cost"]
        if out.get("ponder_cost") is not None:
            total = total + self.cfg.get("ponderCost", 0) * out["ponder_cost"]
        return total, ce


class Encoder(ReadoutMixin, torch.nn.Module):
    def __init__(self, cfg, vocab, symbols, readouts=1):
        super().__init__()
        self.cfg, self.readouts = cfg, readouts
        self.read_first = cfg.get("readout", "last") == "first"
        C = cfg["dModel"]
        self.embedding = parameter(vocab, C)
        if cfg["sharedWeights"]:
            self.layer = EncoderLayer(cfg)
        else:
            for l in range(cfg["steps"]):
                self.add_module(f"layer{l}", EncoderLayer(cfg))
        self.readout = Linear(symbols, C, True)

    def layer_at(self, t):
        return self.layer if self.cfg["sharedWeights"] else getattr(self, f"layer{t}")

    def forward(self, tokens, lengths, steps=None):
        """logits (B*R, S) and what the steps did (attention, gates, loss terms)."""
        cfg = self.cfg
        steps = steps or (cfg["evalSteps"] or cfg["steps"])
        B, T = tokens.shape
        valid = torch.arange(T, device=tokens.device)[None, :] < lengths[:, None]
        h = self.embedding[tokens]
        if cfg["positional"] == "sinusoidal":
            h = h + sinusoid_table(range(T), cfg["dModel"], h.dtype).to(h.device)
            if self.training and cfg["dropout"] > 0:
                h = F.dropout(h, cfg["dropout"], True)
        attention, gates, entropy, cost = [], [], 0.0, 0.0
        for t in range(steps):
            h, att, w, g = self.layer_at(t)(h, valid)
            attention.append(att)
            if w is not None:
                entropy = entropy + route_entropy(w, valid) / steps
            if g is not None:
                gates.append(g)
                cost = cost + t * g[valid].mean()
        return {
            "logits": self.readout(self.read_rows(h, lengths)),
            "attention": attention,
            "gates": gates,
            "route_entropy": entropy if self.layer_at(0).route is not None else None,
            "thought_cost": cost if gates else None,
        }


# ---------------------------------------------------------------------------------------------
# The LSTM baseline


class Lstm(ReadoutMixin, torch.nn.Module):
    """One LSTM layer over the tokens between [B] and [E] (gates i, f, g, o), read after the last one."""

    def __init__(self, cfg, vocab, symbols, readouts=1):
        super().__init__()
        self.cfg, self.readouts, self.read_first = cfg, readouts, False
        Hd, E = cfg["lstmHidden"], cfg["lstmEmbedding"]
        self.embedding = parameter(vocab, E)
        self.lstm = torch.nn.Module()
        self.lstm.w_ih, self.lstm.w_hh = parameter(4 * Hd, E), parameter(4 * Hd, Hd)
        self.lstm.b_ih, self.lstm.b_hh = parameter(4 * Hd), parameter(4 * Hd)
        self.readout = Linear(symbols, Hd, True)

    def forward(self, tokens, lengths, steps=None):
        B = tokens.shape[0]
        Hd = self.cfg["lstmHidden"]
        x = self.embedding[tokens[:, 1:]]  # token t of the question at index t - 1
        if self.training and self.cfg["dropout"] > 0:
            x = F.dropout(x, self.cfg["dropout"], True)
        count = lengths - 2
        h = x.new_zeros(B, Hd)
        c = x.new_zeros(B, Hd)
        for t in range(int(count.max()) if B else 0):
            a = F.linear(x[:, t], self.lstm.w_ih, self.lstm.b_ih) + F.linear(h, self.lstm.w_hh, self.lstm.b_hh)
            i, f, g, o = a.chunk(4, -1)
            c2 = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h2 = torch.sigmoid(o) * torch.tanh(c2)
            running = (t < count)[:, None]
            c, h = torch.where(running, c2, c), torch.where(running, h2, h)
        return {"logits": self.readout(h), "attention": [], "gates": []}


# ---------------------------------------------------------------------------------------------
# ThoughtNet


class ThoughtOperator(torch.nn.Module):
    """u = x Win^T + bin; a = attention(u); z = tanh(a W1^T + b1); o = tanh(z W2^T + h R^T + b2)."""

    def __init__(self, C, P, Fd, H):
        super().__init__()
        self.C = C
        self.add_module("in", Linear(C, C + P, True))
        self.att = SoftmaxAttention(C, H)
        self.dense = Linear(Fd, C, True)
        self.out = torch.nn.Module()
        self.out.w, self.out.state, self.out.b = parameter(C, Fd), parameter(C, C), parameter(C)

    def forward(self, x, valid):
        u = getattr(self, "in")(x)
        a, att = self.att(u, valid)
        z = torch.tanh(self.dense(a))
        o = torch.tanh(F.linear(z, self.out.w, self.out.b) + F.linear(x[..., : self.C], self.out.state))
        return o, att


class ThoughtNet(ReadoutMixin, torch.nn.Module):
    """K learned operators and the zero operator (the identity), mixed per token by a softmax selector."""

    def __init__(self, cfg, vocab, symbols, readouts=1):
        super().__init__()
        self.cfg, self.readouts, self.read_first = cfg, readouts, False
        C, Fd, K, P, H = cfg["dModel"], cfg["dFF"], cfg["operators"], cfg["positionDims"], cfg["heads"]
        self.K, self.P = K, P
        self.expansion = parameter(vocab, C)
        for k in range(K):
            self.add_module(f"op{k}", ThoughtOperator(C, P, Fd, H))
        self.selector = torch.nn.Module()
        self.selector.hidden = Linear(Fd, C + P, True)
        self.selector.out = Linear(K + 1, Fd, True)
        self.readout = Linear(symbols, C, True)

    def forward(self, tokens, lengths, steps=None):
        steps = steps or (self.cfg["evalSteps"] or self.cfg["steps"])
        B, T = tokens.shape
        valid = torch.arange(T, device=tokens.device)[None, :] < lengths[:, None]
        h = torch.tanh(self.expansion[tokens])
        pos = sinusoid_table(range(T), self.P, h.dtype).to(h.device).expand(B, T, self.P)
        attention, selections, cost = [], [], 0.0
        for t in range(steps):
            x = torch.cat([h, pos], -1)
            s = self.selector.out(torch.tanh(self.selector.hidden(x))).softmax(-1)
            out = s[..., :1] * h
            for k in range(self.K):
                o, att = getattr(self, f"op{k}")(x, valid)
                out = out + s[..., k + 1 : k + 2] * o
                attention.append(att)
            cost = cost + t * s[..., 1:].sum(-1)[valid].sum() / B
            selections.append(s)
            h = out
        return {
            "logits": self.readout(self.read_rows(h, lengths)),
            "attention": attention,
            "selection": selections,
            "gates": [],
            "thought_cost": cost,
        }



# ---------------------------------------------------------------------------------------------
# The Universal Transformer with ACT


class Act(ReadoutMixin, torch.nn.Module):
    """One shared softmax layer run for at most `steps` steps; each position halts when its cumulative
    halting probability would pass haltAt, its output the states weighted by its halting distribution."""

    def __init__(self, cfg, vocab, symbols, readouts=1):
        super().__init__()
        self.cfg, self.readouts = cfg, readouts
        self.read_first = cfg.get("readout", "last") == "first"
        C = cfg["dModel"]
        self.embedding = parameter(vocab, C)
        self.layer = EncoderLayer(dict(cfg, attention="softmax", update="residual", gateDropout=0.0))
        self.halt = torch.nn.Module()
        self.halt.w, self.halt.b = parameter(C), parameter(1)
        self.readout = Linear(symbols, C, True)

    def forward(self, tokens, lengths, steps=None):
        cfg = self.cfg
        steps = steps or (cfg["evalSteps"] or cfg["steps"])
        B, T = tokens.shape
        valid = torch.arange(T, device=tokens.device)[None, :] < lengths[:, None]
        h = self.embedding[tokens]
        if cfg["positional"] == "sinusoidal":
            h = h + sinusoid_table(range(T), cfg["dModel"], h.dtype).to(h.device)
            if self.training and cfg["dropout"] > 0:
                h = F.dropout(h, cfg["dropout"], True)
        cumulative = torch.zeros(B, T, dtype=h.dtype, device=h.device)
        remainder = torch.zeros_like(cumulative)
        halted = ~valid
        out = torch.zeros_like(h)
        attention, weights = [], []
        for t in range(steps):
            running = ~halted
            p = torch.sigmoid(h @ self.halt.w + self.halt.b)
            stop = running & ((cumulative + p > cfg["haltAt"]) | (t == steps - 1))
            go = running & ~stop
            zero = torch.zeros_like(p)
            w = torch.where(stop, 1 - cumulative, torch.where(go, p, zero))
            remainder = torch.where(stop, 1 - cumulative, remainder)
            cumulative = torch.where(go, cumulative + p, cumulative)
            halted = halted | stop
            h, att, _, _ = self.layer(h, valid)
            out = out + w[..., None] * h
            attention.append(att)
            weights.append(w)
            if not bool((~halted).any()):
                break
        return {
            "logits": self.readout(self.read_rows(out, lengths)),
            "attention": attention,
            "gates": weights,
            "ponder_cost": remainder[valid].mean(),
        }


# ---------------------------------------------------------------------------------------------
# Loading exported models

KINDS = {"encoder": Encoder, "lstm": Lstm, "thoughtnet": ThoughtNet, "ut-act": Act}


class Exported(torch.nn.Module):
    """An exported model with its tokenizer: `answer(text)`, `forward(tokens, lengths)`."""

    def __init__(self, description, net):
        super().__init__()
        self.description, self.net = description, net
        self.config, self.task = description["model"], description["task"]
        self.name = self.config["name"]
        self.tokenizer = Tokenizer(description)

    def forward(self, tokens, lengths, steps=None):
        return self.net(tokens, lengths, steps)

    @torch.no_grad()
    def answer(self, text, steps=None):
        """The model's answer to one question, as the task writes answers: without dropout (eval
        mode, as the engine answers), the module left in the mode it was in."""
        tokens, lengths = self.tokenizer.batch([text])
        was_training = self.training
        self.eval()
        try:
            logits = self.net(tokens, lengths, steps)["logits"]
        finally:
            self.train(was_training)
        best = logits.argmax(-1).tolist()
        return "".join(self.tokenizer.answers[i] for i in best)


def load_model(path, name=None, dtype=torch.float32):
    """The model a description (<model>.json) names, or of a folder of them the one called `name`
    (any case; the only one when the folder holds one)."""
    if os.path.isdir(path):
        models = load_models(path, dtype)
        if name is None and len(models) == 1:
            return next(iter(models.values()))
        for key, m in models.items():
            if name is not None and key.lower() == name.lower():
                return m
        raise KeyError(f"{path}: no model {name!r}; it has {', '.join(models)}")
    with open(path) as f:
        description = json.load(f)
    if description.get("format") != "ndr-studio-model":
        raise ValueError(f"{path}: not an NDR Studio model description")
    cfg = description["model"]
    weights, _ = read_safetensors(os.path.join(os.path.dirname(path), description["weights"]))
    tok = Tokenizer(description)
    net = KINDS[cfg.get("kind", "encoder")](cfg, len(tok.vocabulary), len(tok.answers), tok.readouts)
    net.load_state_dict({k: v.reshape(net.state_dict()[k].shape) for k, v in weights.items()}, strict=True)
    return Exported(description, net.to(dtype))


def load_models(folder, dtype=torch.float32):
    """Every model of an exported folder, by name, in the run's order."""
    found = []
    for entry in sorted(os.listdir(folder)):
        if entry.endswith(".json"):
            m = load_model(os.path.join(folder, entry), dtype=dtype)
            found.append((m.description.get("index", len(found)), m))
    return {m.name: m for _, m in sorted(found, key=lambda p: p[0])}
