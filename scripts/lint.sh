#!/usr/bin/env bash
# Formatting and static checks of the C++ sources.
#   ./scripts/lint.sh --check          list files clang-format would change (exit 1 if any)
#   ./scripts/lint.sh --fix            rewrite them in place
#   ./scripts/lint.sh --tidy [BUILD]   clang-tidy (.clang-tidy) over BUILD/compile_commands.json
#                                      (default build-clang; configure it with
#                                      -DCMAKE_EXPORT_COMPILE_COMMANDS=ON): the project's
#                                      sources, tests too when TIDY_TESTS=1
# CLANG_FORMAT / RUN_CLANG_TIDY pick the tools (default: the versions 14 the
# configuration is written for).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
clang_format="${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format)}"
run_clang_tidy="${RUN_CLANG_TIDY:-$(command -v run-clang-tidy-14 || command -v run-clang-tidy)}"

# Tracked and new (not ignored) C++ files: build trees and generated sources
# are ignored by git, so they never count.
sources() { git ls-files --cached --others --exclude-standard -- '*.cpp' '*.hpp' '*.h' '*.cc'; }

case "${1:-}" in
  --check)
    bad=()
    while IFS= read -r f; do
      [ -f "$f" ] || continue
      if ! "$clang_format" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
    done < <(sources)
    if [ ${#bad[@]} -eq 0 ]; then echo "lint: every file is formatted"; exit 0; fi
    printf '%s\n' "${bad[@]}"
    echo "lint: ${#bad[@]} files are not formatted (./scripts/lint.sh --fix)" >&2
    exit 1
    ;;
  --fix)
    sources | while IFS= read -r f; do [ -f "$f" ] && "$clang_format" --style=file -i "$f"; done
    echo "lint: formatted"
    ;;
  --tidy)
    build="${2:-build-clang}"
    db="$build/compile_commands.json"
    if [ ! -f "$db" ]; then
      echo "lint: no $db; configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON (e.g. cmake -S . -B $build" \
           "-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_EXPORT_COMPILE_COMMANDS=ON) and build once" >&2
      exit 2
    fi
    # Only the project's own translation units (not generated ones in the
    # build tree, not the fuzzers), headers of the project only; every core,
    # quietly. Tests double the run time (~5 s of CPU per file), so they are
    # opt-in.
    if [ "${TIDY_TESTS:-0}" = 1 ]; then
      files='^'"$root"'/(core|registry|runtime|plugins|ops|tools|api|tests)/'
    else
      files='^'"$root"'/(core|registry|runtime|plugins|ops|tools|api)/(?!.*/test_)'
    fi
    start=$(date +%s)
    "$run_clang_tidy" -p "$build" -quiet -j "$(nproc 2>/dev/null || echo 2)" \
      -header-filter="^$root/(core|registry|runtime|plugins|ops|tools|api|tests)/" "$files" \
      > "$build/clang-tidy.log" 2>&1 || status=$?
    # run-clang-tidy exits non-zero on findings; print them (not the progress lines).
    sed 's/\x1b\[[0-9;]*m//g' "$build/clang-tidy.log" | grep -E '(warning|error): ' | sort -u || true
    echo "lint: clang-tidy took $(( $(date +%s) - start ))s (full log: $build/clang-tidy.log)"
    exit "${status:-0}"
    ;;
  *)
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
