#!/usr/bin/env bash
# The scaffold: tools/scaffold/new_op.sh writes a complete op folder that
# compiles against the headers of this tree, refuses to overwrite a folder and
# rejects bad names; the code shown in docs/adding-an-op.md is what it writes.
#
#   scaffold_test.sh --source DIR --cxx COMPILER [--cxx-flags FLAGS] [--includes DIR:DIR...]
#
# Registered as the ctest `scaffold_creates_buildable_op`.
set -uo pipefail

source_dir="" cxx="" cxx_flags="" includes=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --source) source_dir="$2"; shift 2 ;;
        --cxx) cxx="$2"; shift 2 ;;
        --cxx-flags) cxx_flags="$2"; shift 2 ;;
        --includes)
            IFS=: read -ra _dirs <<< "$2"
            for d in "${_dirs[@]}"; do [[ -n "$d" ]] && includes+=("-I$d"); done
            shift 2 ;;
        *) echo "FAIL: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
[[ -n "$source_dir" && -n "$cxx" ]] || fail "--source and --cxx are required"
scaffold="$source_dir/tools/scaffold/new_op.sh"
[[ -x "$scaffold" ]] || fail "$scaffold is missing or not executable"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/dynrt_scaffold_test.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
name=my_op   # the name docs/adding-an-op.md uses
dir="$tmp/$name"
# Entries of $tmp other than the op folder, our *.log files and generated/ (staging
# folders of the scaffold would show up here).
stray() {
    local e out=""
    for e in "$tmp"/* "$tmp"/.[!.]*; do
        [[ -e "$e" ]] || continue
        case "$(basename "$e")" in "$name" | *.log | generated) ;; *) out+=" $(basename "$e")" ;; esac
    done
    echo "$out"
}

# 1. It creates the six files.
bash "$scaffold" --into "$tmp" "$name" > "$tmp/out.log" 2>&1 || { cat "$tmp/out.log" >&2; fail "new_op.sh $name"; }
for f in CMakeLists.txt "${name}_op.cpp" "${name}.cl" sweep.txt README.md "test_${name}.cpp"; do
    [[ -s "$dir/$f" ]] || fail "new_op.sh did not write $dir/$f"
done
grep -q "dynrt_add_op(NAME $name SOURCES ${name}_op.cpp KERNELS ${name}.cl TESTS test_${name}.cpp)" \
    "$dir/CMakeLists.txt" || fail "CMakeLists.txt does not call dynrt_add_op for $name: $(cat "$dir/CMakeLists.txt")"
grep -q "KERNEL(${name}_ref)" "$dir/${name}.cl" || fail "${name}.cl has no kernel ${name}_ref"
grep -q "DYNRT_MODULE(\"$name\"" "$dir/${name}_op.cpp" || fail "${name}_op.cpp has no DYNRT_MODULE(\"$name\", ...)"
if grep -rq "@NAME@\|@CAMEL@" "$dir"; then fail "placeholders left in $dir: $(grep -rl '@NAME@\|@CAMEL@' "$dir")"; fi
[[ -z "$(stray)" ]] || fail "new_op.sh left stray files:$(stray)"

# 2. The op and its test compile, warnings as errors (the kernel embedded as
# dynrt_add_op does it, into the header the op includes).
mkdir -p "$tmp/generated"
"${CMAKE:-cmake}" -DIN="$dir/${name}.cl" -DOUT="$tmp/generated/${name}_cl.hpp" -DVAR="${name}_cl" \
    -P "$source_dir/cmake/EmbedKernel.cmake" > "$tmp/embed.log" 2>&1 || { cat "$tmp/embed.log" >&2; fail "embedding ${name}.cl"; }
includes+=("-I$tmp/generated")
for f in "${name}_op.cpp" "test_${name}.cpp"; do
    # shellcheck disable=SC2086 # cxx_flags is a list of flags
    "$cxx" -std=c++17 -fsyntax-only -Wall -Wextra -Wpedantic -Wshadow -Werror $cxx_flags \
        -I"$source_dir/core/include" -I"$source_dir/registry/include" -I"$source_dir/runtime/include" \
        -I"$source_dir/plugins/ocl/sdk/include" -I"$source_dir/tests/support" \
        "${includes[@]}" "$dir/$f" > "$tmp/cc.log" 2>&1 || { cat "$tmp/cc.log" >&2; fail "$f does not compile"; }
done
echo "ok: the generated op and test compile"

# 3. An existing folder is left alone.
before="$(cat "$dir"/* | cksum)"
echo "// edited" >> "$dir/${name}_op.cpp"
edited="$(cat "$dir"/* | cksum)"
bash "$scaffold" --into "$tmp" "$name" > "$tmp/again.log" 2>&1 && fail "new_op.sh overwrote the existing $dir"
grep -q "already exists" "$tmp/again.log" || fail "no 'already exists' message: $(cat "$tmp/again.log")"
[[ "$(cat "$dir"/* | cksum)" == "$edited" && "$edited" != "$before" ]] || fail "the existing folder changed"

# 4. Bad names and bad usage are refused before anything is written.
for bad in My_op 1op my-op "my op" ""; do
    bash "$scaffold" --into "$tmp" "$bad" > "$tmp/bad.log" 2>&1 && fail "new_op.sh accepted the name '$bad'"
done
bash "$scaffold" --into "$tmp/no_such_dir" other_op > "$tmp/bad.log" 2>&1 && fail "new_op.sh accepted a missing --into folder"
[[ -z "$(stray)" ]] || fail "a refused call left files:$(stray)"
echo "ok: existing folders and bad names are refused"

# 5. Every code block of docs/adding-an-op.md marked `<!-- scaffold: FILE -->`
# appears verbatim in that generated file, so the walk-through shows real code.
doc="$source_dir/docs/adding-an-op.md"
[[ -f "$doc" ]] || fail "$doc is missing"
"${PYTHON:-python3}" - "$doc" "$dir" <<'PY' || fail "docs/adding-an-op.md has drifted from the scaffold"
import os, re, sys, textwrap
doc, folder = sys.argv[1], sys.argv[2]
text = open(doc).read()
blocks = re.findall(r"<!-- scaffold: (\S+) -->\s*```\w*\n(.*?)```", text, re.S)
if not blocks:
    sys.exit("no <!-- scaffold: FILE --> blocks in " + doc)
for name, code in blocks:
    # Blocks inside list items are indented in the doc; compare the code itself.
    code = textwrap.dedent(code).rstrip()
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        sys.exit("%s quotes %s, which the scaffold does not write" % (doc, name))
    if code not in open(path).read():
        sys.exit("%s: the block quoted from %s is not in the generated file:\n%s" % (doc, name, code))
print("ok: %d code blocks of the doc match the generated files" % len(blocks))
PY
echo "PASS: the scaffold creates a buildable op"
