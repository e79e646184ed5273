"""The dynrt package against the test models' reference outputs: Model.run,
requests whose shapes change from run to run, two threads on one model, a
YAML pipeline, and every bad input raising dynrt.Error with dynrt's message."""
import threading
import time

import numpy as np
import pytest

from conftest import data_set, model_path

ATOL, RTOL = 1e-4, 1e-3


@pytest.fixture(scope="module")
def encoder(dynrt):
    return dynrt.Model(model_path("encoder"), device="cpu")


@pytest.fixture(scope="module")
def cnn(dynrt):
    return dynrt.Model(model_path("cnn"), device="cpu")


def feeds_of(model, inputs):
    return {info.name: x for info, x in zip(model.inputs, inputs)}


def check_outputs(model, got, want):
    assert list(got) == [o.name for o in model.outputs]
    for (name, y), ref in zip(got.items(), want):
        assert y.shape == ref.shape, name
        assert y.dtype == ref.dtype, name
        np.testing.assert_allclose(y, ref, atol=ATOL, rtol=RTOL, err_msg=name)


def test_inputs_and_outputs_name_their_dims(cnn, encoder):
    (image,) = cnn.inputs
    assert (image.name, image.dtype, image.shape) == ("image", np.float32, ["batch", 3, "height", "width"])
    (logits,) = cnn.outputs
    assert (logits.name, logits.dtype, logits.shape) == ("logits", np.float32, ["batch", 10])
    assert [(i.name, i.dtype, i.shape) for i in encoder.inputs] == [
        ("input_ids", np.int64, ["batch", "sequence"]), ("attention_mask", np.int64, ["batch", "sequence"])]
    assert [o.shape for o in encoder.outputs] == [["batch", "sequence", 32], ["batch", 32]]
    assert cnn.device == "cpu"


@pytest.mark.parametrize("model", ["cnn", "encoder", "decoder_prefill", "audio"])
def test_model_run_matches_the_reference(dynrt, model):
    m = dynrt.Model(model_path(model), device="cpu")
    inputs, outputs = data_set(model, 0)
    check_outputs(m, m.run(feeds_of(m, inputs)), outputs)


def test_shapes_change_on_one_request(encoder):
    r = encoder.create_request()
    shapes = set()
    for k in (0, 1, 2, 0, 2):
        inputs, outputs = data_set("encoder", k)
        shapes.add(inputs[0].shape)
        check_outputs(encoder, r.run(feeds_of(encoder, inputs)), outputs)
    assert len(shapes) == 3   # the data sets do change shape


def test_inputs_keep_their_value_and_outputs_are_copies(cnn):
    r = cnn.create_request()
    inputs, outputs = data_set("cnn", 0)
    r.set_input("image", inputs[0])
    first = r.run()["logits"]
    np.testing.assert_allclose(first, outputs[0], atol=ATOL, rtol=RTOL)
    other, other_out = data_set("cnn", 1)
    r.run({"image": other[0]})
    # The first result is the caller's: the second run did not overwrite it.
    np.testing.assert_allclose(first, outputs[0], atol=ATOL, rtol=RTOL)
    np.testing.assert_allclose(r.output("logits"), other_out[0], atol=ATOL, rtol=RTOL)
    # The input was copied when set: changing the array afterwards changes nothing.
    x = inputs[0].copy()
    r.set_input("image", x)
    x[:] = 0
    np.testing.assert_allclose(r.run()["logits"], outputs[0], atol=ATOL, rtol=RTOL)


class Tensor:
    """A tensor of some other library: only the DLPack protocol (`array`
    None: one that cannot be exported to the host, as a GPU tensor)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        if self.array is None:
            raise BufferError("this tensor is on another device")
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return (1, 0) if self.array is not None else (2, 0)


def test_dlpack_inputs_and_outputs(dynrt, cnn):
    inputs, outputs = data_set("cnn", 0)
    y = cnn.run({"image": Tensor(inputs[0])})["logits"]
    np.testing.assert_allclose(y, outputs[0], atol=ATOL, rtol=RTOL)
    # Outputs are numpy arrays: DLPack consumers take them as they are.
    np.testing.assert_array_equal(np.from_dlpack(y), y)
    # One that numpy cannot take is refused, naming the input.
    raises(dynrt, lambda: cnn.run({"image": Tensor(None)}), "input 'image'", "from_dlpack", "another device")


def test_two_threads_on_one_model(encoder):
    sets = [data_set("encoder", k) for k in range(3)]
    errors = []

    def work(t):
        try:
            r = encoder.create_request()
            for i in range(12):
                inputs, outputs = sets[(i + t) % 3]
                got = r.run(feeds_of(encoder, inputs)) if i % 2 else encoder.run(feeds_of(encoder, inputs))
                check_outputs(encoder, got, outputs)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_other_threads_run_python_while_a_model_runs(cnn):
    """run() releases the GIL. The interpreter's forced thread switches are
    off, so the other thread runs Python only where the main thread lets the
    GIL go; `outputs=[]` makes no arrays (numpy lets it go in large copies).
    The other thread notes whether a run is under way each time it runs: it
    sees one only if run() let the GIL go."""
    import sys
    x = np.random.default_rng(0).standard_normal((4, 3, 128, 128)).astype(np.float32)
    r = cnn.create_request()
    r.set_input("image", x)
    running, seen_running, stop, started = [False], [False], threading.Event(), threading.Event()

    def spin():
        started.set()
        while not stop.is_set():
            seen_running[0] = seen_running[0] or running[0]
            time.sleep(0)   # lets the GIL go, so the main thread can take it back

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    t = threading.Thread(target=spin)
    try:
        t.start()
        started.wait()
        # Up to 100 runs: on a loaded machine the other thread may wait a
        # while for a core; held, the GIL keeps it out of every one of them.
        for _ in range(100):
            running[0] = True
            r.run(outputs=[])
            running[0] = False
            if seen_running[0]:
                break
    finally:
        stop.set()
        sys.setswitchinterval(interval)
        t.join()
    assert seen_running[0]


def test_profiled_runs_time_every_op_node(encoder):
    r = encoder.create_request()
    inputs, _ = data_set("encoder", 0)
    r.run(feeds_of(encoder, inputs))
    assert r.last_run()["nodes"] == [] and r.last_run()["ms"] > 0
    r.set_profiling(True)
    r.run()
    t = r.last_run()
    ran = [n for n in t["nodes"] if n["impl"] not in ("", "fused", "view")]
    assert ran, t
    assert all(n["ms"] > 0 for n in ran)
    assert not any(n["op"].startswith("<") for n in t["nodes"])
    assert sum(n["ms"] for n in t["nodes"]) <= t["ms"]
    r.set_profiling(False)
    r.run()
    assert r.last_run()["nodes"] == []


def test_a_yaml_pipeline(dynrt, tmp_path):
    (tmp_path / "relu.yaml").write_text(
        "name: relu\n"
        "inputs:\n  x: {dtype: f32, shape: [n, 4]}\n"
        "nodes:\n  - {name: y, op: activation, inputs: [x], attrs: {func: relu}}\n"
        "outputs: [y]\n"
        "schedule:\n  - {n: 1}\n")
    m = dynrt.Model(str(tmp_path / "relu.yaml"), device="cpu")
    assert [(i.name, i.shape) for i in m.inputs] == [("x", ["n", 4])]
    r = m.create_request()
    for n in (3, 1, 7):
        x = np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32)
        np.testing.assert_array_equal(r.run({"x": x})["y"], np.maximum(x, 0))


def test_pipeline_state_and_reset(dynrt):
    import os
    from conftest import SOURCE_DIR
    m = dynrt.Model(os.path.join(SOURCE_DIR, "configs", "llm_decode_kv.yaml"), device="cpu")
    r = m.create_request()
    first = r.run({"ids": np.array([[3]], np.int64)})["out"]
    r.run({"ids": np.array([[5]], np.int64)})
    # The KV cache now holds two tokens: the same token gives another output ...
    assert not np.array_equal(r.run({"ids": np.array([[3]], np.int64)})["out"], first)
    # ... until the state is reset.
    r.reset_state()
    np.testing.assert_array_equal(r.run({"ids": np.array([[3]], np.int64)})["out"], first)


# ---- errors -------------------------------------------------------------------

def raises(dynrt, fn, *parts):
    with pytest.raises(dynrt.Error) as info:
        fn()
    for p in parts:
        assert p in str(info.value), str(info.value)
    return info.value


def test_unknown_input_name(dynrt, cnn):
    x = data_set("cnn", 0)[0][0]
    e = raises(dynrt, lambda: cnn.run({"imag": x}), "the model has no input 'imag'", "did you mean 'image'",
               "its inputs: image")
    assert e.file == model_path("cnn")
    raises(dynrt, lambda: cnn.create_request().set_input("nope", x), "no input 'nope'")


def test_wrong_dtype(dynrt, cnn):
    x = data_set("cnn", 0)[0][0]
    raises(dynrt, lambda: cnn.run({"image": x.astype(np.float64)}), "input 'image': holds f64, the model declares f32")
    raises(dynrt, lambda: cnn.run({"image": x.astype(np.complex64)}), "input 'image'", "complex64", "has no dynrt type")


def test_wrong_rank_and_fixed_dim(dynrt, cnn):
    x = data_set("cnn", 0)[0][0]
    raises(dynrt, lambda: cnn.run({"image": x[0]}), "input 'image': shape [3,32,32]",
           "declared [batch,3,height,width] (rank 3 vs 4)")
    raises(dynrt, lambda: cnn.run({"image": np.zeros((1, 4, 8, 8), np.float32)}), "shape [1,4,8,8]", "at dim 1")


def test_non_contiguous_array(dynrt, cnn):
    x = data_set("cnn", 0)[0][0]
    raises(dynrt, lambda: cnn.run({"image": x[:, :, ::2]}), "input 'image': the array is not C-contiguous",
           "ascontiguousarray")
    # A contiguous copy of the same view runs.
    assert cnn.run({"image": np.ascontiguousarray(x[:, :, ::2])})["logits"].shape == (1, 10)


def test_inputs_that_disagree_on_a_shared_dim(dynrt, encoder):
    ids = np.ones((1, 5), np.int64)
    raises(dynrt, lambda: encoder.run({"input_ids": ids, "attention_mask": np.ones((1, 6), np.int64)}),
           "sets 'sequence' to 6", "sets it to 5")


def test_missing_input(dynrt, encoder):
    raises(dynrt, lambda: encoder.run({"input_ids": np.ones((1, 5), np.int64)}), "'attention_mask' not given")
    raises(dynrt, lambda: encoder.create_request().run(), "input 'attention_mask' was not set")


def test_missing_file_unknown_device_and_passes(dynrt, tmp_path):
    missing = str(tmp_path / "missing.onnx")
    e = raises(dynrt, lambda: dynrt.Model(missing), missing, "cannot open")
    assert e.file == missing
    e = raises(dynrt, lambda: dynrt.Model(model_path("cnn"), device="tpu"), "unknown device 'tpu'", "available:")
    assert e.field == "device"
    raises(dynrt, lambda: dynrt.Model(model_path("cnn"), device="cpu", passes="-nosuchpass"), "nosuchpass")
    raises(dynrt, lambda: dynrt.Model(model_path("cnn"), module_dirs=[str(tmp_path)]), "no module loaded from")


def test_output_errors(dynrt, cnn):
    r = cnn.create_request()
    raises(dynrt, lambda: r.output("logits"), "has not run")
    r.run({"image": data_set("cnn", 0)[0][0]})
    raises(dynrt, lambda: r.output("logit"), "no output 'logit'", "did you mean 'logits'")


def test_passes_off_give_the_same_outputs(dynrt):
    m = dynrt.Model(model_path("encoder"), device="cpu", passes="none")
    inputs, outputs = data_set("encoder", 1)
    check_outputs(m, m.run(feeds_of(m, inputs)), outputs)


def test_load_tensor_reads_what_the_reference_reader_reads(dynrt):
    from conftest import MODELS, read_pb
    import os
    path = os.path.join(MODELS, "encoder", "test_data_set_0", "input_0.pb")
    x = dynrt.load_tensor(path)
    ref = read_pb(path)
    assert x.dtype == ref.dtype and x.shape == ref.shape
    np.testing.assert_array_equal(x, ref)
