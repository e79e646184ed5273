"""dynrt: run ONNX models and YAML pipelines whose shapes change between runs.

    import dynrt
    m = dynrt.Model("model.onnx", device="auto")
    m.inputs                                  # [TensorInfo(name='x', dtype=float32, shape=[batch,3,64,64])]
    y = m.run({"x": x})["y"]                  # numpy arrays in and out
    r = m.create_request()                    # repeated runs, shapes may change
    r.run({"x": x2})

Errors are dynrt.Error with the message dynrt's CLI prints (docs/python.md).
"""
from ._dynrt import Error, Model, Request, TensorInfo, load_tensor

__all__ = ["Error", "Model", "Request", "TensorInfo", "load_tensor"]
