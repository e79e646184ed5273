"""Shared by the tests of the dynrt package: the source tree, the test models
and their reference data (read by tests/sdk/check_outputs.py's TensorProto
reader, independent of dynrt's own)."""
import os
import sys

import numpy as np
import pytest

SOURCE_DIR = os.environ.get("DYNRT_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODELS = os.path.join(SOURCE_DIR, "tests", "models")
sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "sdk"))
import check_outputs  # noqa: E402

_NUMPY = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64, 9: np.bool_, 11: np.float64}


def read_pb(path):
    """An ONNX TensorProto file as a numpy array."""
    with open(path, "rb") as f:
        data = f.read()
    dtype = None
    pos = 0
    # The data type (field 2) decides the numpy type; check_outputs reads the values.
    while pos < len(data):
        key, pos = check_outputs._varint(data, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = check_outputs._varint(data, pos)
            if field == 2:
                dtype = value
        elif wire == 2:
            length, pos = check_outputs._varint(data, pos)
            pos += length
        else:
            pos += 4 if wire == 5 else 8
    shape, values = check_outputs.read_pb(path)
    return np.array(values, dtype=_NUMPY[dtype]).reshape(shape)


def data_set(model, k):
    """(inputs, outputs) of tests/models/<model>/test_data_set_<k>, in model order."""
    folder = os.path.join(MODELS, model, "test_data_set_%d" % k)
    files = sorted(os.listdir(folder))
    ins = [read_pb(os.path.join(folder, f)) for f in files if f.startswith("input_")]
    outs = [read_pb(os.path.join(folder, f)) for f in files if f.startswith("output_")]
    return ins, outs


def model_path(model):
    return os.path.join(MODELS, model, "model.onnx")


@pytest.fixture(scope="session")
def dynrt():
    import dynrt as module
    return module
