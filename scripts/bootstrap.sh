#!/usr/bin/env bash
# One command from a fresh Debian 12 / Ubuntu 24.04 machine: install what is
# missing, build into build/, run the default pipeline on the default device.
#   ./scripts/bootstrap.sh [extra arguments for `dynrt run`]
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
dynrt_install_packages
dynrt_build "$DYNRT_ROOT/build"
exec "$DYNRT_ROOT/build/bin/dynrt" run "$DYNRT_ROOT/configs/default.yaml" "$@"
