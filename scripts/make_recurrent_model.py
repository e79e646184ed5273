#!/usr/bin/env python3
"""Writes tests/models/recurrent: a small recurrent text encoder in the ONNX
backend-test layout, with reference outputs from onnxruntime.

    tests/models/recurrent/model.onnx
    tests/models/recurrent/test_data_set_<k>/input_0.pb, output_<i>.pb

The graph is the one torch.onnx.export (TorchScript, opset 14) writes for
nn.LSTM(24, 48) followed by a bidirectional nn.GRU(48, 32), batch first:
Transpose to sequence first, LSTM (W, R, B), Squeeze of the direction
axis, GRU (linear_before_reset 1, as torch's GRU computes it), Transpose
and Reshape back to [batch, sequence, 64]; the LSTM's Y_h is the second
output. It is written here with onnx.helper rather than exported, so that
making it needs no torch (only onnx, onnxruntime and numpy): the weights
are drawn as torch initialises them, uniform in +-1/sqrt(hidden). Three data
sets of different batch and sequence lengths (the dynamic path);
references: onnxruntime's CPU provider, every graph optimisation off, one
thread. CI and the runtime never run this script.

    scripts/make_recurrent_model.py                 # a venv under build/recurrent-venv
    scripts/make_recurrent_model.py --no-venv       # the current python's onnx, onnxruntime, numpy
    scripts/make_recurrent_model.py --out DIR
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
INPUT, HIDDEN_LSTM, HIDDEN_GRU = 24, 48, 32
SHAPES = [(1, 5), (3, 17), (2, 64)]   # (batch, sequence) of each data set


def ensure_venv(args):
    venv = os.path.join(ROOT, "build", "recurrent-venv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", venv])
        subprocess.check_call([py, "-m", "pip", "install", "--quiet", "onnx==1.23.2", "onnxruntime==1.32.0",
                               "numpy==2.4.6"])
    os.execv(py, [py, os.path.abspath(__file__), "--no-venv", "--out", args.out])


def build(out):
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)

    def uniform(shape, hidden):
        k = 1.0 / np.sqrt(hidden)
        return rng.uniform(-k, k, size=shape).astype(np.float32)

    inits = [
        numpy_helper.from_array(uniform((1, 4 * HIDDEN_LSTM, INPUT), HIDDEN_LSTM), "lstm_W"),
        numpy_helper.from_array(uniform((1, 4 * HIDDEN_LSTM, HIDDEN_LSTM), HIDDEN_LSTM), "lstm_R"),
        numpy_helper.from_array(uniform((1, 8 * HIDDEN_LSTM), HIDDEN_LSTM), "lstm_B"),
        numpy_helper.from_array(uniform((2, 3 * HIDDEN_GRU, HIDDEN_LSTM), HIDDEN_GRU), "gru_W"),
        numpy_helper.from_array(uniform((2, 3 * HIDDEN_GRU, HIDDEN_GRU), HIDDEN_GRU), "gru_R"),
        numpy_helper.from_array(uniform((2, 6 * HIDDEN_GRU), HIDDEN_GRU), "gru_B"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis_1"),
        numpy_helper.from_array(np.array([0, 0, 2 * HIDDEN_GRU], dtype=np.int64), "out_shape"),
    ]
    nodes = [
        helper.make_node("Transpose", ["x"], ["x_t"], perm=[1, 0, 2], name="/Transpose"),
        helper.make_node("LSTM", ["x_t", "lstm_W", "lstm_R", "lstm_B"], ["lstm_y", "lstm_h"], hidden_size=HIDDEN_LSTM,
                         name="/lstm/LSTM"),
        helper.make_node("Squeeze", ["lstm_y", "axis_1"], ["lstm_seq"], name="/lstm/Squeeze"),
        helper.make_node("GRU", ["lstm_seq", "gru_W", "gru_R", "gru_B"], ["gru_y"], hidden_size=HIDDEN_GRU,
                         direction="bidirectional", linear_before_reset=1, name="/gru/GRU"),
        helper.make_node("Transpose", ["gru_y"], ["gru_t"], perm=[2, 0, 1, 3], name="/gru/Transpose"),
        helper.make_node("Reshape", ["gru_t", "out_shape"], ["y"], name="/Reshape"),
    ]
    graph = helper.make_graph(
        nodes, "recurrent", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", INPUT])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence", 2 * HIDDEN_GRU]),
         helper.make_tensor_value_info("lstm_h", TensorProto.FLOAT, [1, "batch", HIDDEN_LSTM])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], producer_name="make_recurrent_model")
    onnx.checker.check_model(model, full_check=True)

    folder = os.path.join(out, "recurrent")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(os.path.join(folder, "model.onnx"), so, providers=["CPUExecutionProvider"])
    for k, (batch, seq) in enumerate(SHAPES):
        ds = os.path.join(folder, "test_data_set_%d" % k)
        os.makedirs(ds)
        x = rng.standard_normal((batch, seq, INPUT)).astype(np.float32)
        outs = sess.run(None, {"x": x})
        with open(os.path.join(ds, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, "x").SerializeToString())
        for i, (name, v) in enumerate(zip(["y", "lstm_h"], outs)):
            with open(os.path.join(ds, "output_%d.pb" % i), "wb") as f:
                f.write(numpy_helper.from_array(v, name).SerializeToString())
    print("wrote", folder)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "models"))
    ap.add_argument("--no-venv", action="store_true", help="use the current python's packages")
    args = ap.parse_args()
    if not args.no_venv:
        ensure_venv(args)
    build(args.out)


if __name__ == "__main__":
    main()
