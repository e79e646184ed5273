#!/usr/bin/env python3
"""Writes clip_input.npy, the tensor the example pipeline feeds in its last run.

Standard library only (no numpy): a version 1.0 .npy is a magic string, a
little-endian header length, a Python-dict header padded to 64 bytes, then the
raw little-endian float32 values in C order.

    python3 make_input.py [OUT.npy]      (default: clip_input.npy next to this file)
"""
import os
import struct
import sys

# Below, inside and above clip.yaml's [0, 1]; all exactly representable in f32.
VALUES = [-3.0, -1.0, -0.25, 0.0, 0.125, 0.5, 0.75, 1.0, 1.5, 7.0]


def npy_bytes(values, shape):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %r, }" % (tuple(shape),)
    # magic(6) + version(2) + header length(2) + header + '\n', padded to 64.
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") +
            struct.pack("<%df" % len(values), *values))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                             "clip_input.npy")
    with open(out, "wb") as f:
        f.write(npy_bytes(VALUES, (1, len(VALUES))))


if __name__ == "__main__":
    main()
