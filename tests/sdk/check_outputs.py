#!/usr/bin/env python3
"""Checks of the SDK test (sdk_test.sh), standard library only.

    check_outputs.py ops OPS.json MODULE_DIR OP
        `dynrt ops --json` lists a module from MODULE_DIR that registered OP with
        at least one impl, and it carries the same build fingerprint as the
        other modules.
    check_outputs.py clip OUT_DIR INPUT.npy LO HI SHAPES
        OUT_DIR/run_<k>/c.npy exist for k = 0..len(SHAPES)-1 (SHAPES like
        "1x3,1x17,1x3,1x10") and no more; every value lies in [LO, HI]; the last
        run, fed INPUT.npy, equals clip(INPUT, LO, HI) computed here.
    check_outputs.py installed OPS.json MODULE_DIR COUNT
        `dynrt ops --json` of the installed CLI loaded every module of its own
        folder MODULE_DIR (COUNT of them, the build tree's count) and none failed.
    check_outputs.py model OUT_DIR DATA_DIR ATOL
        OUT_DIR/output_<k>.npy (what examples/embed wrote) exist for exactly the
        outputs DATA_DIR/output_<k>.pb of an ONNX test data set has, with the
        same shape, and every value is within ATOL (plus 1e-3 relative) of it.
    check_outputs.py refused OPS.json MODULE OP
        `dynrt ops --json` lists MODULE under "failed" with a fingerprint
        mismatch telling to rebuild, no loaded module registers OP, and the
        other modules still loaded.
Exits non-zero with a message on the first failure.
"""
import ast
import json
import math
import os
import struct
import sys


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def read_npy(path):
    """Returns (shape, values) of a little-endian f32 .npy, version 1-3."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        fail("cannot read %s: %s" % (path, e))
    if data[:6] != b"\x93NUMPY":
        fail("%s: not a .npy file (bad magic)" % path)
    major = data[6]
    if major == 1:
        (hlen,), start = struct.unpack_from("<H", data, 8), 10
    elif major in (2, 3):
        (hlen,), start = struct.unpack_from("<I", data, 8), 12
    else:
        fail("%s: unknown .npy version %d" % (path, major))
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    if header.get("descr") != "<f4" or header.get("fortran_order"):
        fail("%s: expected C-order <f4, got header %r" % (path, header))
    shape = tuple(header["shape"])
    count = 1
    for d in shape:
        count *= d
    body = data[start + hlen:]
    if len(body) != 4 * count:
        fail("%s: %d data bytes for shape %r (want %d)" % (path, len(body), shape, 4 * count))
    return shape, list(struct.unpack("<%df" % count, body))


def _varint(data, pos):
    value, shift = 0, 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


# TensorProto.DataType -> struct format and size
_PB_TYPES = {1: ("f", 4), 2: ("B", 1), 3: ("b", 1), 6: ("i", 4), 7: ("q", 8), 9: ("?", 1), 11: ("d", 8)}


def read_pb(path):
    """Returns (shape, values) of an ONNX TensorProto file (raw_data or the typed
    float_data / int32_data / int64_data / double_data fields)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        fail("cannot read %s: %s" % (path, e))
    dims, dtype, raw, typed = [], None, None, []
    pos = 0
    try:
        while pos < len(data):
            key, pos = _varint(data, pos)
            field, wire = key >> 3, key & 7
            if wire == 0:
                value, pos = _varint(data, pos)
                if field == 1:
                    dims.append(value - (1 << 64) if value >= 1 << 63 else value)
                elif field == 2:
                    dtype = value
                elif field in (5, 7):
                    typed.append(value)
            elif wire == 2:
                length, pos = _varint(data, pos)
                chunk, pos = data[pos:pos + length], pos + length
                if field == 1:   # packed dims
                    p = 0
                    while p < len(chunk):
                        value, p = _varint(chunk, p)
                        dims.append(value)
                elif field == 9:
                    raw = chunk
                elif field == 4:   # packed float_data
                    typed.extend(struct.unpack("<%df" % (len(chunk) // 4), chunk))
                elif field == 10:   # packed double_data
                    typed.extend(struct.unpack("<%dd" % (len(chunk) // 8), chunk))
                elif field in (5, 7):   # packed int32_data / int64_data
                    p = 0
                    while p < len(chunk):
                        value, p = _varint(chunk, p)
                        typed.append(value - (1 << 64) if value >= 1 << 63 else value)
            elif wire == 5:
                if field == 4:
                    typed.append(struct.unpack_from("<f", data, pos)[0])
                pos += 4
            elif wire == 1:
                if field == 10:
                    typed.append(struct.unpack_from("<d", data, pos)[0])
                pos += 8
            else:
                raise ValueError("wire type %d" % wire)
    except (ValueError, struct.error) as e:
        fail("%s: not a TensorProto: %s" % (path, e))
    if dtype not in _PB_TYPES:
        fail("%s: data type %r is not one this check reads" % (path, dtype))
    count = 1
    for d in dims:
        count *= d
    if raw is not None:
        fmt, size = _PB_TYPES[dtype]
        if len(raw) != count * size:
            fail("%s: %d raw bytes for shape %r" % (path, len(raw), dims))
        values = list(struct.unpack("<%d%s" % (count, fmt), raw))
    else:
        values = typed
        if len(values) != count:
            fail("%s: %d values for shape %r" % (path, len(values), dims))
    return tuple(dims), values


def check_model(out_dir, data_dir, atol):
    atol = float(atol)
    refs = sorted(f for f in os.listdir(data_dir) if f.startswith("output_") and f.endswith(".pb"))
    outs = sorted(f for f in os.listdir(out_dir) if f.startswith("output_") and f.endswith(".npy"))
    if not refs:
        fail("%s holds no output_<k>.pb" % data_dir)
    if [f[:-3] for f in refs] != [f[:-4] for f in outs]:
        fail("outputs %s written, the data set has %s" % (outs, refs))
    for ref_file in refs:
        name = ref_file[:-3]
        shape, want = read_pb(os.path.join(data_dir, ref_file))
        got_shape, got = read_npy(os.path.join(out_dir, name + ".npy"))
        if tuple(got_shape) != tuple(shape):
            fail("%s: shape %r, the reference %r" % (name, got_shape, shape))
        worst = 0.0
        for i, (g, w) in enumerate(zip(got, want)):
            err = abs(g - w)
            if not err <= atol + 1e-3 * abs(w):
                fail("%s: element %d is %r, the reference %r (atol %g)" % (name, i, g, w, atol))
            worst = max(worst, err)
        print("ok: %s %r matches %s (max abs error %.3g)" % (name, shape, ref_file, worst))


def load_ops(ops_json):
    try:
        with open(ops_json) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail("`dynrt ops --json` output %s is not JSON: %s" % (ops_json, e))


def check_ops(ops_json, module_dir, op):
    doc = load_ops(ops_json)
    modules = doc.get("modules")
    if not isinstance(modules, list) or not modules:
        fail("`dynrt ops --json` lists no modules")
    module_dir = os.path.realpath(module_dir)
    ours = [m for m in modules if os.path.dirname(os.path.realpath(m.get("path", ""))) == module_dir]
    if not ours:
        fail("no module from %s in `dynrt ops --json`; paths: %s" % (module_dir, [m.get("path") for m in modules]))
    entry = None
    for m in ours:
        for o in m.get("ops", []):
            if o.get("name") == op:
                entry = (m, o)
    if entry is None:
        fail("module(s) %s do not list op '%s'" % ([m.get("path") for m in ours], op))
    module, op_entry = entry
    if not op_entry.get("impls"):
        fail("op '%s' lists no impls" % op)
    others = {m.get("fingerprint") for m in modules if m is not module}
    if others and others != {module.get("fingerprint")}:
        fail("fingerprint %r of %s differs from the in-tree modules' %r" % (module.get("fingerprint"),
                                                                           module.get("path"), others))
    print("ok: %s registers '%s' with impls %s" % (module.get("path"), op,
                                                  [i.get("type", "?") + "/" + i.get("shape", "?")
                                                   for i in op_entry["impls"]]))


def check_refused(ops_json, module, op):
    doc = load_ops(ops_json)
    module = os.path.realpath(module)
    failed = [f for f in doc.get("failed", []) if os.path.realpath(f.get("path", "")) == module]
    if not failed:
        fail("%s is not listed as failed; failed: %s" % (module, doc.get("failed")))
    err = failed[0].get("error", "")
    for word in (module, "fingerprint", "rebuild"):
        if word not in err:
            fail("the load error of %s does not mention %r: %s" % (module, word, err))
    if any(o.get("name") == op for m in doc.get("modules", []) for o in m.get("ops", [])):
        fail("op '%s' is registered although its module was refused" % op)
    if not doc.get("modules"):
        fail("no module loaded next to the refused one")
    print("ok: refused with: %s" % err)


def check_clip(out_dir, input_npy, lo, hi, shapes):
    lo, hi = float(lo), float(hi)
    want_shapes = [tuple(int(d) for d in s.split("x")) for s in shapes.split(",")]
    runs = sorted(d for d in os.listdir(out_dir) if d.startswith("run_")) if os.path.isdir(out_dir) else []
    if len(runs) != len(want_shapes):
        fail("%s holds runs %s, expected %d runs" % (out_dir, runs, len(want_shapes)))
    last = None
    for k, want in enumerate(want_shapes):
        path = os.path.join(out_dir, "run_%d" % k, "c.npy")
        if not os.path.isfile(path):
            fail("missing output %s" % path)
        shape, values = read_npy(path)
        if shape != want:
            fail("%s has shape %r, expected %r" % (path, shape, want))
        for i, v in enumerate(values):
            if math.isnan(v) or v < lo or v > hi:
                fail("%s[%d] = %r lies outside [%g, %g]" % (path, i, v, lo, hi))
        last = (path, shape, values)

    in_shape, x = read_npy(input_npy)
    if not (min(x) < lo and max(x) > hi and any(lo < v < hi for v in x)):
        fail("%s should hold values below, inside and above [%g, %g] for the check to mean anything" %
             (input_npy, lo, hi))
    path, shape, y = last
    if shape != in_shape:
        fail("%s has shape %r, the fed input %r" % (path, shape, in_shape))
    for i, (xi, yi) in enumerate(zip(x, y)):
        want = min(max(xi, lo), hi)   # exact in f32: the bounds and inputs are representable
        if yi != want:
            fail("%s[%d] = %r, expected clip(%r) = %r" % (path, i, yi, xi, want))
    print("ok: %d runs in [%g, %g]; the fed run equals clip(input) at all %d elements" %
          (len(want_shapes), lo, hi, len(x)))


def check_installed(ops_json, module_dir, count):
    doc = load_ops(ops_json)
    failed = doc.get("failed") or []
    if failed:
        fail("the installed CLI could not load %d modules, e.g. %s" % (len(failed), failed[0]))
    module_dir = os.path.realpath(module_dir)
    paths = [os.path.realpath(m.get("path", "")) for m in doc.get("modules") or []]
    outside = [p for p in paths if os.path.dirname(p) != module_dir]
    if outside:
        fail("the installed CLI loaded modules from outside %s: %s" % (module_dir, outside[:3]))
    if len(paths) != int(count):
        fail("the installed CLI loaded %d modules from %s, the build tree has %s" % (len(paths), module_dir, count))
    print("ok: the installed CLI loaded all %d modules of %s" % (len(paths), module_dir))


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "ops" and len(sys.argv) == 5:
        check_ops(*sys.argv[2:])
    elif len(sys.argv) >= 2 and sys.argv[1] == "installed" and len(sys.argv) == 5:
        check_installed(*sys.argv[2:])
    elif len(sys.argv) >= 2 and sys.argv[1] == "refused" and len(sys.argv) == 5:
        check_refused(*sys.argv[2:])
    elif len(sys.argv) >= 2 and sys.argv[1] == "model" and len(sys.argv) == 5:
        check_model(*sys.argv[2:])
    elif len(sys.argv) >= 2 and sys.argv[1] == "clip" and len(sys.argv) == 7:
        check_clip(*sys.argv[2:])
    else:
        fail("usage: see the docstring of %s" % sys.argv[0])


if __name__ == "__main__":
    main()
