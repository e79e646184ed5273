#!/usr/bin/env python3
"""Writes dynrt's real-model ONNX corpus: transformers and torchvision
architectures at tiny sizes with random seeded weights, exported as users
export them, each in the ONNX backend-test layout

    tests/corpus/<arch>_<exporter>/model.onnx
    tests/corpus/<arch>_<exporter>/test_data_set_<k>/input_<i>.pb, output_<i>.pb

with three data sets of different shapes (batch, sequence or image size) and
reference outputs from onnxruntime (CPU provider, every graph optimisation
off). `<exporter>` is `dynamo` (torch.onnx.export(dynamo=True), opset 18) or
`torchscript` (dynamo=False, opset 17): the two spell attention, masks and
shape arithmetic differently. CI and the runtime never need this script: only
people who change the corpus run it.

    scripts/make_model_corpus.py                       # makes a venv under build/corpus-venv (pinned versions)
    scripts/make_model_corpus.py --python /path/python # an interpreter that has the pinned packages
    scripts/make_model_corpus.py --no-venv             # the current interpreter
    scripts/make_model_corpus.py --only bert,llama_kv  # some architectures (every exporter of each)
    scripts/make_model_corpus.py --out DIR             # another output folder (default tests/corpus)
    scripts/make_model_corpus.py --list                # the architectures and their exporters

The versions are pinned in scripts/corpus-requirements.txt; with them the
output is the same byte for byte on every run: weights come from the config
classes' own initialisation under a seed derived from the architecture's name
(no download: no from_pretrained, no hub), data from numpy under the same
seed, and the exporter's per-node metadata (stack traces naming the venv's
files) is dropped. Each model is written with its weights inline.
"""
import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import warnings
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REQUIREMENTS = os.path.join(HERE, "corpus-requirements.txt")


def ensure_venv():
    venv = os.path.join(ROOT, "build", "corpus-venv")
    py = os.path.join(venv, "bin", "python")
    stamp = os.path.join(venv, "requirements.txt")
    with open(REQUIREMENTS) as f:
        wanted = f.read()
    if not os.path.exists(stamp) or open(stamp).read() != wanted:
        subprocess.check_call([sys.executable, "-m", "venv", "--clear", venv])
        # From PyPI, as pip is configured (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL:
        # e.g. PyTorch's CPU index for a smaller torch).
        subprocess.check_call([py, "-m", "pip", "install", "--quiet", "-r", REQUIREMENTS])
        with open(stamp, "w") as f:
            f.write(wanted)
    return py


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "corpus"))
    ap.add_argument("--no-venv", action="store_true", help="use the current python's packages")
    ap.add_argument("--python", default="", help="use this interpreter (it has the pinned packages)")
    ap.add_argument("--only", default="", help="comma-separated architectures (e.g. bert,llama_kv)")
    ap.add_argument("--list", action="store_true", help="print the architectures and exporters, then exit")
    args = ap.parse_args()
    if not args.no_venv and not args.list:
        py = args.python or ensure_venv()
        cmd = [py, os.path.abspath(__file__), "--no-venv", "--out", args.out]
        if args.only:
            cmd += ["--only", args.only]
        os.execv(py, cmd)
    if args.list:
        for name, exporters, _ in ARCHS:
            print("%-18s %s" % (name, " ".join(exporters)))
        return
    build(args)


# ---- the architectures ----------------------------------------------------------------------
#
# Each builder returns a Case: the module (a wrapper whose forward takes the
# ONNX inputs by name, positionally, and returns a tuple), the input names,
# output names, the dynamic axes of the inputs (the names become dim_params),
# the example inputs the exporter traces, and three data sets of different
# shapes. `rng` is numpy's generator, seeded from the architecture's name.

ARCHS = []   # (name, exporters, builder)
BOTH = ("dynamo", "torchscript")
DYNAMO = ("dynamo",)


def arch(name, exporters=DYNAMO):
    def register(fn):
        ARCHS.append((name, exporters, fn))
        return fn
    return register


class Case:
    def __init__(self, model, inputs, outputs, axes, example, data_sets):
        self.model, self.inputs, self.outputs, self.axes = model, inputs, outputs, axes
        self.example, self.data_sets = example, data_sets


VOCAB = 128   # text models: 128 tokens, 32 wide, 2 layers, 4 heads (2 key/value heads where grouped), MLP 64


def _torch():
    import torch
    return torch


def ids(rng, b, s, high=VOCAB):
    import numpy as np
    return rng.integers(3, high, size=(b, s), dtype=np.int64)   # 0-2: special tokens


def padded_mask(b, s):
    """Ones, with the last row's tail masked out (right padding) when b > 1."""
    import numpy as np
    m = np.ones((b, s), dtype=np.int64)
    if b > 1:
        m[-1, s // 2 + 1:] = 0
    return m


def f32(rng, *shape, scale=1.0):
    import numpy as np
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def tensors(arrays):
    torch = _torch()
    return tuple(torch.from_numpy(a) for a in arrays)


def module(inner, forward, arg_names):
    """Wraps `inner` in a module whose forward(<arg_names>) calls forward(inner, ...).
    The forward's parameters carry the ONNX input names, which the dynamo
    exporter matches with the dynamic shapes; the inner model is the submodule
    `m`, so weights are named m.<its own names>."""
    torch = _torch()
    args = ", ".join(arg_names)
    ns = {"_f": forward}
    exec("def forward(self, %s):\n    return _f(self.m, %s)\n" % (args, args), ns)
    cls = type("Wrapper", (torch.nn.Module,), {"forward": ns["forward"]})
    w = cls()
    w.m = inner
    return w.eval()


# -- encoders (BERT family): input_ids, attention_mask -> last_hidden_state (+ pooler_output)

def text_encoder_case(rng, model, pooled):
    def fwd(m, input_ids, attention_mask):
        o = m(input_ids=input_ids, attention_mask=attention_mask)
        return (o.last_hidden_state, o.pooler_output) if pooled else (o.last_hidden_state,)

    def ds(b, s):
        return [ids(rng, b, s), padded_mask(b, s)]

    outs = ["last_hidden_state"] + (["pooler_output"] if pooled else [])
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}}
    return Case(module(model, fwd, ["input_ids", "attention_mask"]), ["input_ids", "attention_mask"], outs, axes,
                ds(2, 8), [ds(1, 7), ds(2, 12), ds(3, 5)])


@arch("bert", BOTH)
def bert(rng):
    from transformers import BertConfig, BertModel
    c = BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                   intermediate_size=64, max_position_embeddings=64, attn_implementation="sdpa")
    return text_encoder_case(rng, BertModel(c), True)


@arch("roberta", BOTH)
def roberta(rng):
    from transformers import RobertaConfig, RobertaModel
    c = RobertaConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=64, max_position_embeddings=66, pad_token_id=1)
    return text_encoder_case(rng, RobertaModel(c), True)


@arch("distilbert", BOTH)
def distilbert(rng):
    from transformers import DistilBertConfig, DistilBertModel
    c = DistilBertConfig(vocab_size=VOCAB, dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                         max_position_embeddings=64)
    return text_encoder_case(rng, DistilBertModel(c), False)


@arch("albert")
def albert(rng):
    from transformers import AlbertConfig, AlbertModel
    c = AlbertConfig(vocab_size=VOCAB, embedding_size=16, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)
    return text_encoder_case(rng, AlbertModel(c), True)


@arch("electra")
def electra(rng):
    from transformers import ElectraConfig, ElectraModel
    c = ElectraConfig(vocab_size=VOCAB, embedding_size=16, hidden_size=32, num_hidden_layers=2,
                      num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)
    return text_encoder_case(rng, ElectraModel(c), False)


# -- decoders: a prefill (input_ids, attention_mask -> logits) and a decode step with
#    a KV cache (past key/value per layer in, present out)

def decoder_config(name):
    import transformers as t
    h, L, n, f, p = 32, 2, 4, 64, 64
    common = dict(vocab_size=VOCAB, bos_token_id=1, eos_token_id=2, pad_token_id=0, tie_word_embeddings=False)
    if name == "gpt2":
        return t.GPT2Config(n_embd=h, n_layer=L, n_head=n, n_inner=f, n_positions=p, **common), t.GPT2LMHeadModel
    if name == "gpt_neox":
        return (t.GPTNeoXConfig(hidden_size=h, num_hidden_layers=L, num_attention_heads=n, intermediate_size=f,
                                max_position_embeddings=p, rotary_pct=0.5, **common), t.GPTNeoXForCausalLM)
    if name == "llama":
        return (t.LlamaConfig(hidden_size=h, num_hidden_layers=L, num_attention_heads=n, num_key_value_heads=2,
                              intermediate_size=f, max_position_embeddings=p, **common), t.LlamaForCausalLM)
    if name == "mistral":   # a sliding window of 8, shorter than the longer data sets: its own mask and cache
        return (t.MistralConfig(hidden_size=h, num_hidden_layers=L, num_attention_heads=n, num_key_value_heads=2,
                                intermediate_size=f, max_position_embeddings=p, sliding_window=8, **common),
                t.MistralForCausalLM)
    if name == "qwen2":
        return (t.Qwen2Config(hidden_size=h, num_hidden_layers=L, num_attention_heads=n, num_key_value_heads=2,
                              intermediate_size=f, max_position_embeddings=p, **common), t.Qwen2ForCausalLM)
    if name == "phi":
        return (t.PhiConfig(hidden_size=h, num_hidden_layers=L, num_attention_heads=n, intermediate_size=f,
                            max_position_embeddings=p, partial_rotary_factor=0.5, **common), t.PhiForCausalLM)
    if name == "opt":
        return (t.OPTConfig(hidden_size=h, num_hidden_layers=L, num_attention_heads=n, ffn_dim=f,
                            max_position_embeddings=p, word_embed_proj_dim=h, **common), t.OPTForCausalLM)
    raise KeyError(name)


def kv_shape(cfg):
    """(kv heads, head size) of the model's cache."""
    heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
    return heads, cfg.hidden_size // cfg.num_attention_heads


def decoder_prefill(rng, name):
    cfg, cls = decoder_config(name)
    model = cls(cfg)

    def fwd(m, input_ids, attention_mask):
        return (m(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits,)

    def ds(b, s):
        return [ids(rng, b, s), padded_mask(b, s)]

    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}}
    return Case(module(model, fwd, ["input_ids", "attention_mask"]), ["input_ids", "attention_mask"], ["logits"],
                axes, ds(2, 8), [ds(1, 7), ds(2, 12), ds(3, 5)])


def decoder_kv(rng, name):
    """One step on a KV cache: input_ids [batch, sequence] after past_sequence cached
    tokens; attention_mask covers past and new tokens ([batch, past_sequence +
    sequence]). Two layers: past_key_0, past_value_0, past_key_1, past_value_1."""
    import numpy as np
    from transformers import DynamicCache
    cfg, cls = decoder_config(name)
    model = cls(cfg)
    heads, dk = kv_shape(cfg)
    layers = cfg.num_hidden_layers
    past_names = ["past_%s_%d" % (t, i) for i in range(layers) for t in ("key", "value")]

    def fwd(m, input_ids, attention_mask, *past):
        cache = DynamicCache(ddp_cache_data=[(past[2 * i], past[2 * i + 1]) for i in range(layers)], config=cfg)
        o = m(input_ids=input_ids, attention_mask=attention_mask, cache=cache, use_cache=True)
        present = []
        for layer in o.cache.layers:
            present += [layer.keys, layer.values]
        return (o.logits, *present)

    def ds(b, s, past):
        mask = np.ones((b, past + s), dtype=np.int64)
        if b > 1:
            mask[-1, 0] = 0   # the last row's first cached token is padding
        return [ids(rng, b, s), mask] + [f32(rng, b, heads, past, dk) for _ in past_names]

    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "total_sequence"}}
    for n in past_names:
        axes[n] = {0: "batch", 2: "past_sequence"}
    outs = ["logits"] + [n.replace("past", "present") for n in past_names]
    names = ["input_ids", "attention_mask"] + past_names
    # (batch, new tokens, cached tokens): the example, then the three data sets.
    # Mistral's exported graph keeps one side of its sliding window (8): every
    # cache there is longer than the window.
    steps = [(2, 2, 10), (1, 1, 9), (2, 1, 11), (1, 3, 12)] if name == "mistral" else \
        [(2, 2, 5), (1, 1, 3), (2, 1, 7), (1, 3, 12)]
    data = [ds(*step) for step in steps]
    return Case(module(model, fwd, names), names, outs, axes, data[0], data[1:])


for _name, _exp, _kv_exp in [("gpt2", BOTH, BOTH), ("gpt_neox", DYNAMO, DYNAMO), ("llama", BOTH, BOTH),
                             ("mistral", DYNAMO, DYNAMO), ("qwen2", BOTH, DYNAMO), ("phi", DYNAMO, DYNAMO),
                             ("opt", BOTH, DYNAMO)]:
    arch(_name, _exp)(lambda rng, n=_name: decoder_prefill(rng, n))
    arch(_name + "_kv", _kv_exp)(lambda rng, n=_name: decoder_kv(rng, n))


# -- encoder-decoders: input_ids, attention_mask, decoder_input_ids -> logits

def seq2seq_case(rng, model):
    def fwd(m, input_ids, attention_mask, decoder_input_ids):
        return (m(input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids,
                  use_cache=False).logits,)

    def ds(b, s, t):
        return [ids(rng, b, s), padded_mask(b, s), ids(rng, b, t)]

    names = ["input_ids", "attention_mask", "decoder_input_ids"]
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "decoder_input_ids": {0: "batch", 1: "decoder_sequence"}}
    return Case(module(model, fwd, names), names, ["logits"], axes, ds(2, 8, 4),
                [ds(1, 7, 3), ds(2, 12, 5), ds(3, 5, 9)])


@arch("t5", BOTH)
def t5(rng):
    from transformers import T5Config, T5ForConditionalGeneration
    c = T5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
                 relative_attention_num_buckets=8, relative_attention_max_distance=16, decoder_start_token_id=0,
                 pad_token_id=0, eos_token_id=1)
    return seq2seq_case(rng, T5ForConditionalGeneration(c))


@arch("bart", BOTH)
def bart(rng):
    from transformers import BartConfig, BartForConditionalGeneration
    c = BartConfig(vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                   decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
                   pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
                   forced_eos_token_id=None)
    return seq2seq_case(rng, BartForConditionalGeneration(c))


def whisper_config():
    from transformers import WhisperConfig
    return WhisperConfig(vocab_size=VOCAB, num_mel_bins=16, encoder_layers=2, decoder_layers=2,
                         encoder_attention_heads=4, decoder_attention_heads=4, d_model=32, encoder_ffn_dim=64,
                         decoder_ffn_dim=64, max_source_positions=16, max_target_positions=32, pad_token_id=0,
                         bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, suppress_tokens=None,
                         begin_suppress_tokens=None)


@arch("whisper_encoder", BOTH)
def whisper_encoder(rng):
    """The encoder takes exactly 2 * max_source_positions frames: only the batch varies."""
    from transformers import WhisperForConditionalGeneration
    model = WhisperForConditionalGeneration(whisper_config())

    def fwd(m, input_features):
        return (m.model.encoder(input_features=input_features).last_hidden_state,)

    def ds(b):
        return [f32(rng, b, 16, 32)]

    return Case(module(model, fwd, ["input_features"]), ["input_features"], ["last_hidden_state"],
                {"input_features": {0: "batch"}}, ds(2), [ds(1), ds(3), ds(2)])


@arch("whisper_decoder")   # the TorchScript exporter has no aten::diff
def whisper_decoder(rng):
    """input_ids and the encoder's output -> logits (the LM head is tied to the token embedding)."""
    from transformers import WhisperForConditionalGeneration
    model = WhisperForConditionalGeneration(whisper_config())

    def fwd(m, input_ids, encoder_hidden_states):
        h = m.model.decoder(input_ids=input_ids, encoder_hidden_states=encoder_hidden_states,
                            use_cache=False).last_hidden_state
        return (m.proj_out(h),)

    def ds(b, t):
        return [ids(rng, b, t), f32(rng, b, 16, 32)]

    names = ["input_ids", "encoder_hidden_states"]
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "encoder_hidden_states": {0: "batch"}}
    return Case(module(model, fwd, names), names, ["logits"], axes, ds(2, 4), [ds(1, 3), ds(2, 9), ds(3, 5)])


# -- vision: pixel_values [batch, 3, height, width] -> logits

IMAGES = [(2, 32, 32), (1, 32, 32), (2, 48, 40), (1, 64, 56)]   # (batch, height, width): example, 3 data sets


def vision_case(rng, model, size=None, out="logits", attr="logits", shapes=IMAGES):
    """`size`: the one image size the model takes (patch embeddings with fixed
    position tables): then only the batch varies. Otherwise the height and width
    vary too."""
    def fwd(m, pixel_values):
        return (getattr(m(pixel_values=pixel_values), attr),)

    if size:
        axes = {"pixel_values": {0: "batch"}}
        shapes = [(2, size, size), (1, size, size), (3, size, size), (2, size, size)]
    else:
        axes = {"pixel_values": {0: "batch", 2: "height", 3: "width"}}
    data = [[f32(rng, b, 3, h, w)] for b, h, w in shapes]
    return Case(module(model, fwd, ["pixel_values"]), ["pixel_values"], [out], axes, data[0], data[1:])


def torchvision_case(rng, model):
    """torchvision classifiers take the image positionally."""
    def fwd(m, pixel_values):
        return (m(pixel_values),)

    axes = {"pixel_values": {0: "batch", 2: "height", 3: "width"}}
    data = [[f32(rng, b, 3, h, w)] for b, h, w in IMAGES]
    return Case(module(model, fwd, ["pixel_values"]), ["pixel_values"], ["logits"], axes, data[0], data[1:])


def randomize_batch_norms(model):
    """Running statistics other than 0 and 1, so that folding them matters."""
    torch = _torch()
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm):
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 1.5)
    return model


@arch("vit", BOTH)
def vit(rng):
    from transformers import ViTConfig, ViTForImageClassification
    c = ViTConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                  intermediate_size=64, num_labels=10)
    return vision_case(rng, ViTForImageClassification(c), size=32)


@arch("deit")
def deit(rng):
    from transformers import DeiTConfig, DeiTForImageClassification
    c = DeiTConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                   intermediate_size=64, num_labels=10)
    return vision_case(rng, DeiTForImageClassification(c), size=32)


@arch("swin")
def swin(rng):
    from transformers import SwinConfig, SwinForImageClassification
    c = SwinConfig(image_size=32, patch_size=2, embed_dim=16, depths=[1, 1], num_heads=[2, 4], window_size=4,
                   mlp_ratio=2.0, num_labels=10)
    # Sides that are multiples of 16 (patch 2 x window 4 x the merge's 2): the
    # exported graph keeps the window partition's reshapes but not the padding
    # for other sides, which torch.export traced away.
    return vision_case(rng, SwinForImageClassification(c), shapes=[(2, 32, 32), (1, 32, 32), (2, 48, 64), (1, 64, 48)])


@arch("convnext", BOTH)
def convnext(rng):
    from transformers import ConvNextConfig, ConvNextForImageClassification
    c = ConvNextConfig(patch_size=4, num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], num_labels=10)
    return vision_case(rng, ConvNextForImageClassification(c))


@arch("resnet", BOTH)
def resnet(rng):
    from transformers import ResNetConfig, ResNetForImageClassification
    c = ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic", num_labels=10)
    return vision_case(rng, randomize_batch_norms(ResNetForImageClassification(c)))


@arch("regnet")
def regnet(rng):
    from transformers import RegNetConfig, RegNetForImageClassification
    c = RegNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], groups_width=8, num_labels=10)
    return vision_case(rng, randomize_batch_norms(RegNetForImageClassification(c)))


@arch("mobilenet_v3", BOTH)
def mobilenet_v3(rng):
    """torchvision's MobileNetV3 with three of its bottlenecks (squeeze-excite,
    hardswish, hardsigmoid)."""
    from torchvision.models.mobilenetv3 import InvertedResidualConfig, MobileNetV3
    cfg = [InvertedResidualConfig(16, 3, 16, 16, True, "RE", 2, 1, 1.0),
           InvertedResidualConfig(16, 3, 48, 24, False, "RE", 2, 1, 1.0),
           InvertedResidualConfig(24, 5, 64, 32, True, "HS", 1, 1, 1.0)]
    return torchvision_case(rng, randomize_batch_norms(MobileNetV3(cfg, last_channel=64, num_classes=10)))


@arch("efficientnet")
def efficientnet(rng):
    """torchvision's EfficientNet with three MBConv stages (SiLU, squeeze-excite,
    stochastic depth off in eval)."""
    from torchvision.models.efficientnet import EfficientNet, MBConvConfig
    cfg = [MBConvConfig(1, 3, 1, 16, 16, 1), MBConvConfig(4, 3, 2, 16, 24, 2), MBConvConfig(4, 5, 2, 24, 32, 1)]
    return torchvision_case(rng, randomize_batch_norms(EfficientNet(cfg, dropout=0.2, num_classes=10,
                                                                    last_channel=64)))


@arch("densenet")
def densenet(rng):
    from torchvision.models.densenet import DenseNet
    return torchvision_case(rng, randomize_batch_norms(DenseNet(growth_rate=8, block_config=(2, 2),
                                                                num_init_features=16, bn_size=2, num_classes=10)))


@arch("detr")
def detr(rng):
    """DETR with a ResNet backbone (frozen batch norm, sine position embedding from
    the pixel mask), a 2+2 layer transformer and 8 object queries: pixel_values ->
    logits, pred_boxes."""
    from transformers import DetrConfig, DetrForObjectDetection, ResNetConfig
    backbone = ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic",
                            out_features=["stage2"])
    c = DetrConfig(use_timm_backbone=False, backbone_config=backbone, use_pretrained_backbone=False,
                   d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                   decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, num_queries=8, num_labels=5)
    model = DetrForObjectDetection(c)

    def fwd(m, pixel_values):
        o = m(pixel_values=pixel_values)
        return o.logits, o.pred_boxes

    axes = {"pixel_values": {0: "batch", 2: "height", 3: "width"}}
    shapes = [(2, 64, 64), (1, 64, 64), (2, 96, 80), (1, 64, 128)]
    data = [[f32(rng, b, 3, h, w)] for b, h, w in shapes]
    return Case(module(model, fwd, ["pixel_values"]), ["pixel_values"], ["logits", "pred_boxes"], axes,
                data[0], data[1:])


# -- audio: raw samples [batch, samples]

def audio_config(cls):
    return cls(vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
               conv_dim=(16, 16, 16), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3), conv_bias=False,
               num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, feat_extract_norm="group",
               do_stable_layer_norm=False, pad_token_id=0)


def audio_case(rng, model, out, attr):
    def fwd(m, input_values):
        return (getattr(m(input_values=input_values), attr),)

    data = [[f32(rng, b, n, scale=0.5)] for b, n in [(2, 800), (1, 600), (2, 1000), (3, 400)]]
    return Case(module(model, fwd, ["input_values"]), ["input_values"], [out],
                {"input_values": {0: "batch", 1: "samples"}}, data[0], data[1:])


@arch("wav2vec2", BOTH)
def wav2vec2(rng):
    """Wav2Vec2ForCTC: conv feature encoder, group norm, weight-normed positional
    convolution, 2 encoder layers and the CTC head."""
    from transformers import Wav2Vec2Config, Wav2Vec2ForCTC
    return audio_case(rng, Wav2Vec2ForCTC(audio_config(Wav2Vec2Config)), "logits", "logits")


@arch("hubert")
def hubert(rng):
    from transformers import HubertConfig, HubertModel
    return audio_case(rng, HubertModel(audio_config(HubertConfig)), "last_hidden_state", "last_hidden_state")


# -- CLIP towers

@arch("clip_text", BOTH)
def clip_text(rng):
    """CLIPTextModelWithProjection: causal text encoder, pooled at the end-of-text
    token (eos_token_id 2: the pooling finds it by value), projected."""
    from transformers import CLIPTextConfig, CLIPTextModelWithProjection
    c = CLIPTextConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=4, max_position_embeddings=32, projection_dim=16, pad_token_id=0,
                       bos_token_id=1, eos_token_id=2)
    model = CLIPTextModelWithProjection(c)

    def fwd(m, input_ids, attention_mask):
        o = m(input_ids=input_ids, attention_mask=attention_mask)
        return o.text_embeds, o.last_hidden_state

    def ds(b, s):
        x = ids(rng, b, s)
        mask = padded_mask(b, s)
        for r in range(b):
            end = int(mask[r].sum()) - 1
            x[r, end] = 2          # end of text
            x[r, end + 1:] = 0     # padding
        return [x, mask]

    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}}
    names = ["input_ids", "attention_mask"]
    return Case(module(model, fwd, names), names, ["text_embeds", "last_hidden_state"], axes, ds(2, 8),
                [ds(1, 7), ds(2, 12), ds(3, 5)])


@arch("clip_vision")
def clip_vision(rng):
    from transformers import CLIPVisionConfig, CLIPVisionModelWithProjection
    c = CLIPVisionConfig(image_size=32, patch_size=8, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, projection_dim=16)
    return vision_case(rng, CLIPVisionModelWithProjection(c), size=32, out="image_embeds", attr="image_embeds")


# ---- export and data sets --------------------------------------------------------------------

def build(args):
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    from onnx import numpy_helper

    torch.set_num_threads(1)
    wanted = [w for w in args.only.split(",") if w]
    known = {name for name, _, _ in ARCHS}
    for w in wanted:
        if w not in known:
            raise SystemExit("unknown architecture '%s' (--list names them)" % w)
    os.makedirs(args.out, exist_ok=True)

    def normalize(path):
        """Drops what depends on the machine: the exporter's per-node metadata
        (stack traces with the venv's paths, FX node text) and the local version
        suffix of the producer (+cpu, +cu132)."""
        m = onnx.load(path)
        for graph in [m.graph] + [f for f in m.functions]:
            for n in graph.node:
                del n.metadata_props[:]
        m.producer_version = m.producer_version.split("+")[0]
        onnx.checker.check_model(m, full_check=True)
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        return m

    def export(case, exporter, path):
        kw = dict(input_names=case.inputs, output_names=case.outputs)
        example = tensors(case.example)
        # The exporters' progress lines and tracer warnings would bury the one
        # line per model; errors still show.
        with torch.no_grad(), warnings.catch_warnings(), open(os.devnull, "w") as devnull, \
                contextlib.redirect_stdout(devnull):
            warnings.simplefilter("ignore")
            if exporter == "dynamo":
                torch.onnx.export(case.model, example, path, dynamo=True, opset_version=18, external_data=False,
                                  dynamic_shapes=case.axes, verbose=False, **kw)
            else:
                torch.onnx.export(case.model, example, path, dynamo=False, opset_version=17,
                                  do_constant_folding=True, dynamic_axes=case.axes, **kw)

    def check_dims(m, case, folder):
        """Every axis asked dynamic is a named dim of the exported input (an exporter
        that specialised one would make the data sets' other shapes a lie)."""
        for vi in m.graph.input:
            dims = vi.type.tensor_type.shape.dim
            for axis, name in case.axes.get(vi.name, {}).items():
                if dims[axis].dim_param != name:
                    raise SystemExit("%s: input '%s' axis %d is '%s', not the dynamic '%s'"
                                     % (folder, vi.name, axis, dims[axis].dim_param or dims[axis].dim_value, name))

    def reference(path):
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])

    def write(name, exporter, builder, folder):
        seed = zlib.crc32(name.encode())
        torch.manual_seed(seed)
        case = builder(np.random.default_rng(seed))
        case.model.eval()
        path = os.path.join(folder, "model.onnx")
        export(case, exporter, path)
        m = normalize(path)
        check_dims(m, case, folder)
        sess = reference(path)
        feed_names = [i.name for i in sess.get_inputs()]
        if feed_names != case.inputs:
            raise SystemExit("%s: the model's inputs are %s, not %s" % (folder, feed_names, case.inputs))
        for k, inputs in enumerate(case.data_sets):
            ds = os.path.join(folder, "test_data_set_%d" % k)
            os.makedirs(ds)
            outs = sess.run(None, dict(zip(feed_names, inputs)))
            for i, (n, v) in enumerate(zip(feed_names, inputs)):
                with open(os.path.join(ds, "input_%d.pb" % i), "wb") as f:
                    f.write(numpy_helper.from_array(v, n).SerializeToString())
            for i, (o, v) in enumerate(zip(sess.get_outputs(), outs)):
                if not np.isfinite(v).all():
                    raise SystemExit("%s: output '%s' of data set %d is not finite" % (folder, o.name, k))
                with open(os.path.join(ds, "output_%d.pb" % i), "wb") as f:
                    f.write(numpy_helper.from_array(v, o.name).SerializeToString())
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(folder) for f in fs)
        print("%-28s %7.1f KiB, %4d nodes, ops: %s" % (os.path.basename(folder), size / 1024.0, len(m.graph.node),
                                                    ",".join(sorted({n.op_type for n in m.graph.node}))),
              flush=True)

    failed = []
    for name, exporters, builder in ARCHS:
        if wanted and name not in wanted:
            continue
        for exporter in exporters:
            folder = os.path.join(args.out, "%s_%s" % (name, exporter))
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
            try:
                write(name, exporter, builder, folder)
            except (Exception, SystemExit) as e:   # one model's failure does not stop the others
                shutil.rmtree(folder, ignore_errors=True)
                failed.append(os.path.basename(folder))
                print("%-28s FAILED: %s: %s" % (os.path.basename(folder), type(e).__name__,
                                                str(e).strip().splitlines()[-1] if str(e).strip() else ""),
                      flush=True)
    if failed:
        raise SystemExit("not written: " + ", ".join(failed))


if __name__ == "__main__":
    main()
