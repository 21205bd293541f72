#!/usr/bin/env bash
# Fuzz smoke test: build the four fuzzers of fuzz/ and run each one for a short, bounded time.
#
# Needs a nightly toolchain (cargo-fuzz uses sanitizer flags that only nightly accepts); without one it
# says so and exits 0. cargo-fuzz is installed once into target/ci-tools, so a fresh clone (CI=true)
# needs nothing preinstalled besides rustup's nightly toolchain and python3 for the seed corpora.
#
# FUZZ_SECONDS (default 20) sets the time per target. Longer runs: see docs/contributing.md.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-20}"
targets=(mcp_frames db_load budget cli_args)

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz smoke test skipped: no nightly toolchain is installed (rustup toolchain install nightly)"
  exit 0
fi

tools="$PWD/target/ci-tools"
if [ ! -x "$tools/bin/cargo-fuzz" ]; then
  echo "installing cargo-fuzz into $tools"
  cargo install cargo-fuzz --locked --root "$tools"
fi
export PATH="$tools/bin:$PATH"

if command -v python3 >/dev/null 2>&1; then
  python3 fuzz/build_corpus.py
else
  echo "python3 not found: fuzzing without seed corpora"
fi

cd fuzz
cargo +nightly fuzz build
status=0
for target in "${targets[@]}"; do
  echo "--- fuzzing $target for ${seconds}s"
  mkdir -p "corpus/$target"
  # -close_fd_mask=3: the targets' own stdout/stderr (the MCP server logs to stderr) are silenced;
  # libFuzzer still reports crashes. A crash leaves its input under fuzz/artifacts/<target>/.
  if ! cargo +nightly fuzz run "$target" "corpus/$target" -- \
      -max_total_time="$seconds" -close_fd_mask=3 -rss_limit_mb=2048 -timeout=30; then
    echo "FUZZER FAILED: $target (reproduce: cd fuzz && cargo +nightly fuzz run $target artifacts/$target/<file>)"
    status=1
  fi
done
# The targets keep their scratch databases in per-process temporary directories.
rm -rf "${TMPDIR:-/tmp}"/timeline-fuzz-mcp-* "${TMPDIR:-/tmp}"/timeline-fuzz-cli-*
exit "$status"
