#!/usr/bin/env bash
# The Windows build, run under Wine: .ci/run's `windows` step (docs/contributing.md, "Windows under Wine").
#
# Cross-builds tl.exe, tl-mcp.exe and the chosen integration tests for x86_64-pc-windows-gnu (mingw-w64)
# once, then runs those tests under Wine through cargo's runner: the conformance suite through tl.exe
# and tl-mcp.exe, and the tests of paths, permissions (DACLs read back through the Windows API), locks,
# concurrent writers, crashes and the text view, on both file engines. The tests that cannot run under
# Wine are skipped by name below, each with its reason (and listed in docs/contributing.md); nothing
# else is left out.
#
# Needs mingw-w64 and Wine (Debian: apt-get install mingw-w64 wine wine64), installed here when the
# script runs as root; otherwise it fails and names what is missing. Also runs by hand:
#   bash scripts/ci-windows.sh                 # everything
#   bash scripts/ci-windows.sh --test store    # one test binary (any cargo test arguments)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ci-tools.sh

source scripts/wine/setup.sh
say() { printf 'windows: %s\n' "$*"; }
wine_setup
target=$wine_target

# --- what runs ---
if [ "$#" -gt 0 ]; then
  tests=("$@")
else
  tests=(--test conformance --test store --test store_crash --test terminal --test find --test cli --test mcp)
fi
# Tests Wine cannot run, by name, with the reason (the same list is in docs/contributing.md).
skips=(
  # Wine's console writes its own escape sequences to a Unix terminal; the pseudo-terminal check is Linux-only anyway.
)
skip_args=()
for name in "${skips[@]}"; do skip_args+=(--skip "$name"); done
[ "${#skips[@]}" -eq 0 ] || say "not run under Wine (docs/contributing.md says why): ${skips[*]}"

say "building the Windows programs and test binaries (cargo test --no-run --target $target)"
cargo test --locked --target "$target" --no-run "${tests[@]}"
wine_shim_into "target/$target/debug" "target/$target/debug/deps"

say "running under Wine: ${tests[*]}"
cargo test --locked --target "$target" "${tests[@]}" -- "${skip_args[@]}"
say "passed"
