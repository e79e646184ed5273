#!/usr/bin/env bash
# The module build fingerprint covers exactly the SDK headers (core, registry,
# OpenCL op SDK): editing a runtime header leaves it unchanged, editing an SDK
# header changes it, and the in-tree modules carry the id of this tree.
#   fingerprint_test.sh --source DIR --build DIR [--cmake CMAKE]
set -euo pipefail
cmake_bin=cmake
while [ $# -gt 0 ]; do
    case "$1" in
        --source) src="$2"; shift 2 ;;
        --build) build="$2"; shift 2 ;;
        --cmake) cmake_bin="$2"; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
fail() { echo "FAIL: $*" >&2; exit 1; }
sdk_id() { "$cmake_bin" -DROOT="$1" -P "$src/cmake/SdkId.cmake" 2>&1 | sed -n 's/^DYNRT_SDK_ID=//p'; }

# 1. The build's id is the digest of this tree's SDK headers, and every in-tree
#    module was built with it.
real="$(sdk_id "$src")"
[ -n "$real" ] || fail "SdkId.cmake printed no id"
built="$(sed -n 's/^#define DYNRT_SDK_ID "\(.*\)"/\1/p' "$build/generated/dynrt/sdk_id.hpp")"
[ "$real" = "$built" ] || fail "generated sdk_id.hpp has $built, the headers give $real (configure is stale?)"
for m in "$build"/lib/dynrt/libdynrt_op_*.so; do
    grep -qa "/sdk-$real" "$m" || fail "$(basename "$m") does not carry sdk-$real in its fingerprint"
done
echo "ok: build id $real, carried by every op module"

# 2. On a copy of the headers: runtime edits keep the id, SDK edits change it.
tmp="$(mktemp -d "${TMPDIR:-/tmp}/dynrt_fingerprint.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
for d in core/include registry/include runtime/include plugins/ocl/sdk/include; do
    mkdir -p "$tmp/$d" && cp -r "$src/$d/." "$tmp/$d/"
done
base="$(sdk_id "$tmp")"
[ "$base" = "$real" ] || fail "a copy of the headers gives $base, the tree $real"
for h in "$tmp"/runtime/include/dynrt/*.hpp; do echo "// edited" >> "$h"; done
[ "$(sdk_id "$tmp")" = "$base" ] || fail "editing runtime headers changed the SDK id"
echo "ok: runtime header edits keep the id"
prev="$base"
for h in core/include/dynrt/layout.hpp registry/include/dynrt/op_registry.hpp plugins/ocl/sdk/include/dynrt/ocl_api.hpp; do
    echo "// edited" >> "$tmp/$h"
    now="$(sdk_id "$tmp")"
    [ "$now" != "$prev" ] || fail "editing $h left the SDK id at $prev"
    prev="$now"
done
echo "ok: core, registry and OpenCL SDK header edits change the id"
