#!/usr/bin/env python3
"""Exports real-size transformer models with random weights to ONNX, for
profiles and benchmarks at the size users run (the corpus's models are tiny).
Needs torch and transformers (the GPU machine has them); no network access:
the weights are random, the architecture is the published one.

    scripts/export_real_size.py --out DIR [--models gpt2,bert] [--exporter torchscript|dynamo]

Writes DIR/<model>/model.onnx with dynamic `batch` and `sequence` dims:
  gpt2  GPT2LMHeadModel, GPT-2 small (12 layers, 768 wide, 12 heads, vocab 50257):
        input_ids, attention_mask -> logits (a prefill, no cache)
  bert  BertModel, BERT-base (12 layers, 768 wide, 12 heads, vocab 30522):
        input_ids, attention_mask -> last_hidden_state
Then, e.g.:
    build/bin/dynrt run DIR/gpt2/model.onnx --device cpu --shapes "batch=1;sequence=16" \\
        --warmup 3 --iterations 30 --profile
"""
import argparse
import os


def build(name):
    import torch
    import transformers as t

    if name == "gpt2":
        model = t.GPT2LMHeadModel(t.GPT2Config())
        out = "logits"
    elif name == "bert":
        model = t.BertModel(t.BertConfig())
        out = "last_hidden_state"
    else:
        raise SystemExit("unknown model '%s' (gpt2, bert)" % name)
    model.eval()

    class Wrapper(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            r = self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=False) if name == "gpt2" \
                else self.m(input_ids=input_ids, attention_mask=attention_mask)
            return getattr(r, out)

    example = (torch.randint(0, 1000, (2, 16)), torch.ones(2, 16, dtype=torch.int64))
    return Wrapper(model), example, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="gpt2")
    ap.add_argument("--exporter", default="torchscript", choices=["torchscript", "dynamo"])
    args = ap.parse_args()
    import torch

    torch.manual_seed(0)
    for name in args.models.split(","):
        model, example, out = build(name)
        folder = os.path.join(args.out, name)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "model.onnx")
        axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}}
        with torch.no_grad():
            if args.exporter == "dynamo":
                batch, seq = torch.export.Dim("batch"), torch.export.Dim("sequence")
                shapes = {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}
                torch.onnx.export(model, example, path, dynamo=True, opset_version=18, external_data=False,
                                  input_names=["input_ids", "attention_mask"], output_names=[out],
                                  dynamic_shapes=shapes)
            else:
                torch.onnx.export(model, example, path, dynamo=False, opset_version=17, do_constant_folding=True,
                                  input_names=["input_ids", "attention_mask"], output_names=[out],
                                  dynamic_axes=axes)
        print("%s: %s (%.1f MB)" % (name, path, os.path.getsize(path) / 1e6))


if __name__ == "__main__":
    main()
