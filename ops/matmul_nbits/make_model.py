#!/usr/bin/env python3
"""Writes tests/models/matmul_nbits: one com.microsoft MatMulNBits node
(K 72 in blocks of 32, the last one padded; N 24; 4 bits; packed uint8 zero
points; bias) whose weight is quantised and packed here by hand in numpy, and
three data sets of different row counts whose outputs onnxruntime computes.
ctest runs the folder on cpu and ocl (onnx_model_matmul_nbits_<device>).

    python3 -m venv /tmp/nbits-venv && /tmp/nbits-venv/bin/pip install numpy onnx onnxruntime
    /tmp/nbits-venv/bin/python ops/matmul_nbits/make_model.py
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

K, N, BITS, BLOCK = 72, 24, 4, 32
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "models", "matmul_nbits")


def quantise(w):
    """w [N, K] -> codes [N, blocks, BLOCK/2] (low nibble first), scales
    [N * blocks], packed zero points [N, ceil(blocks / 2)]: asymmetric
    per-block min/max quantisation to 0..15."""
    blocks = (K + BLOCK - 1) // BLOCK
    padded = np.zeros((N, blocks * BLOCK), np.float32)
    padded[:, :K] = w
    q = np.zeros((N, blocks, BLOCK), np.uint8)
    scales = np.zeros((N, blocks), np.float32)
    zps = np.zeros((N, blocks), np.uint8)
    for n in range(N):
        for b in range(blocks):
            v = padded[n, b * BLOCK:(b + 1) * BLOCK]
            lo, hi = min(v.min(), 0.0), max(v.max(), 0.0)
            scale = (hi - lo) / 15 if hi > lo else 1.0
            zp = int(np.clip(round(-lo / scale), 0, 15))
            q[n, b] = np.clip(np.round(v / scale) + zp, 0, 15)
            scales[n, b], zps[n, b] = scale, zp
    codes = (q[:, :, 0::2] | (q[:, :, 1::2] << 4)).astype(np.uint8)
    zp_pad = np.zeros((N, (blocks + 1) // 2 * 2), np.uint8)
    zp_pad[:, :blocks] = zps
    zp_packed = (zp_pad[:, 0::2] | (zp_pad[:, 1::2] << 4)).astype(np.uint8)
    return codes, scales.reshape(-1), zp_packed


def main():
    rng = np.random.default_rng(11)
    w = rng.standard_normal((N, K)).astype(np.float32) * 0.1
    codes, scales, zp = quantise(w)
    bias = (rng.standard_normal(N) * 0.1).astype(np.float32)
    node = helper.make_node("MatMulNBits", ["A", "B", "scales", "zero_points", "", "bias"], ["Y"], name="mm4",
                            domain="com.microsoft", K=K, N=N, bits=BITS, block_size=BLOCK, accuracy_level=0)
    inits = [numpy_helper.from_array(codes, "B"), numpy_helper.from_array(scales, "scales"),
             numpy_helper.from_array(zp, "zero_points"), numpy_helper.from_array(bias, "bias")]
    graph = helper.make_graph([node], "matmul_nbits",
                              [helper.make_tensor_value_info("A", TensorProto.FLOAT, ["batch", "rows", K])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", "rows", N])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "model.onnx")
    onnx.save(model, path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for i, shape in enumerate([(1, 1, K), (2, 5, K), (1, 17, K)]):
        a = rng.standard_normal(shape).astype(np.float32)
        (y,) = sess.run(None, {"A": a})
        folder = os.path.join(OUT, "test_data_set_%d" % i)
        os.makedirs(folder, exist_ok=True)
        onnx.save_tensor(numpy_helper.from_array(a, "A"), os.path.join(folder, "input_0.pb"))
        onnx.save_tensor(numpy_helper.from_array(y, "Y"), os.path.join(folder, "output_0.pb"))
    print("wrote", OUT)


if __name__ == "__main__":
    main()
