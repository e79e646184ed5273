#!/usr/bin/env python3
"""Writes dynrt's ONNX model corpus: tiny models with random seeded weights,
each in the ONNX backend-test layout

    tests/models/<name>/model.onnx
    tests/models/<name>/test_data_set_<k>/input_<i>.pb, output_<i>.pb

with three data sets of different shapes (the dynamic path) and reference
outputs computed by onnxruntime. CI and the runtime never need this script:
only people who change the corpus run it.

    scripts/make_test_models.py                 # makes a venv under build/model-venv (torch, onnx, onnxruntime)
    scripts/make_test_models.py --no-venv       # uses the current python (torch, onnx, onnxruntime installed)
    scripts/make_test_models.py --out DIR       # another output folder

The models are written with plain torch modules (no pretrained weights, no
download), exported by torch.onnx.export at opset 17 with dynamic batch,
sequence or image axes named by their dim_param.
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def ensure_venv(args):
    venv = os.path.join(ROOT, "build", "model-venv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", venv])
        subprocess.check_call([py, "-m", "pip", "install", "--quiet", "--index-url",
                               "https://download.pytorch.org/whl/cpu", "torch"])
        subprocess.check_call([py, "-m", "pip", "install", "--quiet", "onnx", "onnxruntime", "numpy"])
    os.execv(py, [py, os.path.abspath(__file__), "--no-venv", "--out", args.out])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "models"))
    ap.add_argument("--no-venv", action="store_true", help="use the current python's packages")
    ap.add_argument("--only", default="", help="comma-separated model names")
    args = ap.parse_args()
    if not args.no_venv:
        ensure_venv(args)
    build(args)


def build(args):
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    from onnx import numpy_helper
    from torch import nn

    torch.manual_seed(0)
    rng = np.random.default_rng(0)

    # ---- models --------------------------------------------------------------------

    class Attention(nn.Module):
        def __init__(self, d, heads, causal):
            super().__init__()
            self.h, self.dk, self.causal = heads, d // heads, causal
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)

        def split(self, t):
            b, s, _ = t.shape
            return t.reshape(b, s, self.h, self.dk).transpose(1, 2)

        def forward(self, x, mask=None, past=None):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q, k, v = self.split(q), self.split(k), self.split(v)
            if past is not None:
                k = torch.cat([past[0], k], dim=2)
                v = torch.cat([past[1], v], dim=2)
            att = (q @ k.transpose(-1, -2)) / (self.dk ** 0.5)
            if self.causal:
                sq, sk = q.shape[2], k.shape[2]
                keep = torch.ones(sq, sk, dtype=torch.bool).tril(diagonal=sk - sq)
                att = att.masked_fill(~keep, float("-inf"))
            if mask is not None:
                att = att + mask
            y = att.softmax(-1) @ v
            b, h, s, dk = y.shape
            y = y.transpose(1, 2).reshape(b, s, h * dk)
            return self.proj(y), (k, v)

    class Block(nn.Module):
        def __init__(self, d, heads, causal):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.att = Attention(d, heads, causal)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x, mask=None, past=None):
            a, present = self.att(self.ln1(x), mask, past)
            x = x + a
            return x + self.mlp(self.ln2(x)), present

    class DecoderLM(nn.Module):
        """GPT-style: token + position embeddings, causal blocks, LM head."""

        def __init__(self, vocab=97, d=32, heads=4, layers=2, max_pos=64):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(max_pos, d)
            self.blocks = nn.ModuleList([Block(d, heads, True) for _ in range(layers)])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, input_ids, *past):
            offset = past[0].shape[2] if past else 0
            pos = torch.arange(offset, offset + input_ids.shape[1], dtype=torch.long)
            x = self.tok(input_ids) + self.pos(pos)
            presents = []
            for i, b in enumerate(self.blocks):
                x, kv = b(x, None, (past[2 * i], past[2 * i + 1]) if past else None)
                presents += list(kv)
            logits = self.head(self.ln(x))
            return (logits, *presents) if past else logits

    class Encoder(nn.Module):
        """BERT-style: embeddings, padding mask from attention_mask, a pooled output."""

        def __init__(self, vocab=97, d=32, heads=4, layers=2, max_pos=64):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(max_pos, d)
            self.ln = nn.LayerNorm(d)
            self.blocks = nn.ModuleList([Block(d, heads, False) for _ in range(layers)])
            self.pool = nn.Linear(d, d)

        def forward(self, input_ids, attention_mask):
            pos = torch.arange(input_ids.shape[1], dtype=torch.long)
            x = self.ln(self.tok(input_ids) + self.pos(pos))
            mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
            for b in self.blocks:
                x, _ = b(x, mask)
            return x, torch.tanh(self.pool(x[:, 0]))

    class CNN(nn.Module):
        """ResNet-style: conv-bn-relu, max pool, a residual block, global pooling, classifier."""

        def __init__(self, classes=10):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
            self.body = nn.Sequential(nn.Conv2d(8, 8, 3, 1, 1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.Conv2d(8, 8, 3, 1, 1), nn.BatchNorm2d(8))
            self.down = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.ReLU6())
            self.fc = nn.Linear(16, classes)

        def forward(self, x):
            x = self.stem(x)
            x = torch.relu(x + self.body(x))
            x = self.down(x)
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

    class Audio(nn.Module):
        """wav2vec2-style feature encoder: 1-D convs with group norm and GELU, then a projection."""

        def __init__(self, d=32):
            super().__init__()
            self.conv0 = nn.Conv1d(1, 16, 10, 5, bias=False)
            self.norm0 = nn.GroupNorm(16, 16)
            self.conv1 = nn.Conv1d(16, 16, 3, 2, bias=False)
            self.ln = nn.LayerNorm(16)
            self.proj = nn.Linear(16, d)

        def forward(self, audio):
            x = nn.functional.gelu(self.norm0(self.conv0(audio[:, None, :])))
            x = nn.functional.gelu(self.conv1(x))
            return self.proj(self.ln(x.transpose(1, 2)))

    # ---- export and data sets ------------------------------------------------------------

    def randomize_norms(model):
        # BatchNorm running stats other than 0/1, so that folding them matters.
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
        return model.eval()

    def export(name, model, example, input_names, output_names, dynamic_axes, data_sets):
        folder = os.path.join(args.out, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        path = os.path.join(folder, "model.onnx")
        kw = dict(input_names=input_names, output_names=output_names, dynamic_axes=dynamic_axes,
                  opset_version=17, do_constant_folding=True)
        with torch.no_grad():
            try:
                torch.onnx.export(model, example, path, dynamo=False, **kw)
            except TypeError:   # torch before 2.5 has no `dynamo` argument
                torch.onnx.export(model, example, path, **kw)
        onnx.checker.check_model(onnx.load(path))
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        feed_names = [i.name for i in sess.get_inputs()]
        for k, inputs in enumerate(data_sets):
            ds = os.path.join(folder, "test_data_set_%d" % k)
            os.makedirs(ds)
            feed = dict(zip(feed_names, inputs))
            outs = sess.run(None, feed)
            for i, (n, v) in enumerate(zip(feed_names, inputs)):
                with open(os.path.join(ds, "input_%d.pb" % i), "wb") as f:
                    f.write(numpy_helper.from_array(v, n).SerializeToString())
            for i, (o, v) in enumerate(zip(sess.get_outputs(), outs)):
                with open(os.path.join(ds, "output_%d.pb" % i), "wb") as f:
                    f.write(numpy_helper.from_array(v, o.name).SerializeToString())
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(folder) for f in fs)
        print("%-20s %7.1f KiB, ops: %s" % (name, size / 1024.0,
                                          ",".join(sorted({n.op_type for n in onnx.load(path).graph.node}))))

    def ids(b, s):
        return rng.integers(0, 97, size=(b, s), dtype=np.int64)

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    wanted = set(filter(None, args.only.split(",")))

    def want(n):
        return not wanted or n in wanted

    lm = DecoderLM().eval()
    if want("decoder_prefill"):
        export("decoder_prefill", lm, (torch.from_numpy(ids(1, 5)),), ["input_ids"], ["logits"],
               {"input_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}},
               [[ids(1, 7)], [ids(2, 3)], [ids(1, 16)]])
    if want("decoder_decode_kv"):
        layers, heads, dk = 2, 4, 8
        names = ["input_ids"] + ["past_%s_%d" % (t, l) for l in range(layers) for t in ("key", "value")]
        onames = ["logits"] + ["present_%s_%d" % (t, l) for l in range(layers) for t in ("key", "value")]
        axes = {"input_ids": {0: "batch"}, "logits": {0: "batch"}}
        for n in names[1:] + onames[1:]:
            axes[n] = {0: "batch", 2: "past" if n.startswith("past") else "total"}

        def step(b, past):
            return [ids(b, 1)] + [f32(b, heads, past, dk) for _ in range(2 * layers)]

        ex = [torch.from_numpy(a) for a in step(1, 4)]
        export("decoder_decode_kv", lm, tuple(ex), names, onames, axes, [step(1, 3), step(2, 7), step(1, 12)])
    if want("encoder"):
        def enc(b, s):
            m = np.ones((b, s), dtype=np.int64)
            m[-1, s // 2:] = 0   # the last sequence is padded
            return [ids(b, s), m]

        ex = [torch.from_numpy(a) for a in enc(1, 6)]
        export("encoder", Encoder().eval(), tuple(ex), ["input_ids", "attention_mask"],
               ["last_hidden_state", "pooled"],
               {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
                "last_hidden_state": {0: "batch", 1: "sequence"}, "pooled": {0: "batch"}},
               [enc(1, 5), enc(2, 9), enc(3, 4)])
    if want("cnn"):
        export("cnn", randomize_norms(CNN()), (torch.from_numpy(f32(1, 3, 32, 32)),), ["image"], ["logits"],
               {"image": {0: "batch", 2: "height", 3: "width"}, "logits": {0: "batch"}},
               [[f32(1, 3, 32, 32)], [f32(2, 3, 24, 40)], [f32(1, 3, 48, 48)]])
    if want("audio"):
        export("audio", Audio().eval(), (torch.from_numpy(f32(1, 400)),), ["audio"], ["features"],
               {"audio": {0: "batch", 1: "samples"}, "features": {0: "batch", 1: "frames"}},
               [[f32(1, 400)], [f32(2, 250)], [f32(1, 800)]])


if __name__ == "__main__":
    main()
