#!/usr/bin/env bash
# Fuzz smoke test: build the four fuzzers of fuzz/ and run each one for a short, bounded time.
#
# Needs the pinned nightly toolchain (cargo-fuzz uses sanitizer flags that only nightly accepts) and the
# pinned cargo-fuzz (scripts/ci-tools.env): it installs both (rustup; cargo install into target/ci-tools)
# and fails, naming what is missing, when it cannot. python3 builds the seed corpora.
#
# FUZZ_SECONDS (default 20) sets the time per target. Longer runs: see docs/contributing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ci-tools.sh

seconds="${FUZZ_SECONDS:-20}"
targets=(mcp_frames db_load budget cli_args)

ci_nightly
cargo_fuzz=$(ci_cargo_tool cargo-fuzz "$CARGO_FUZZ_VERSION" cargo-fuzz)
export PATH="$(dirname "$cargo_fuzz"):$PATH"
command -v python3 >/dev/null 2>&1 ||
  ci_missing "python3" "The seed corpora are built by fuzz/build_corpus.py (Debian: apt-get install python3)."
echo "fuzzing with $(cargo fuzz --version) on $(rustup run "$FUZZ_NIGHTLY" rustc --version)"

python3 fuzz/build_corpus.py

# cargo fuzz has no --locked: a stale fuzz/Cargo.lock would let it pick whatever the registry has
# today. Refuse one that does not match the manifests.
cargo metadata --locked --format-version 1 --manifest-path fuzz/Cargo.toml >/dev/null || {
  echo "CI FAILED: fuzz/Cargo.lock does not match the manifests. Refresh it (cp Cargo.lock fuzz/Cargo.lock; cargo metadata --format-version 1 --manifest-path fuzz/Cargo.toml >/dev/null) and commit it." >&2
  exit 1
}

# The fuzz project is its own workspace in fuzz/ (cargo-fuzz's default folder).
fuzz_dir=fuzz
cargo "+$FUZZ_NIGHTLY" fuzz build --fuzz-dir "$fuzz_dir"
status=0
for target in "${targets[@]}"; do
  echo "--- fuzzing $target for ${seconds}s"
  mkdir -p "$fuzz_dir/corpus/$target"
  # -close_fd_mask=3: the targets' own stdout/stderr (the MCP server logs to stderr) are silenced;
  # libFuzzer still reports crashes. A crash leaves its input under fuzz/artifacts/<target>/.
  if ! cargo "+$FUZZ_NIGHTLY" fuzz run --fuzz-dir "$fuzz_dir" "$target" "$fuzz_dir/corpus/$target" -- \
      -max_total_time="$seconds" -close_fd_mask=3 -rss_limit_mb=2048 -timeout=30; then
    echo "FUZZER FAILED: $target (reproduce: cargo +$FUZZ_NIGHTLY fuzz run --fuzz-dir fuzz $target fuzz/artifacts/$target/<file>)"
    status=1
  fi
done
# The targets keep their scratch databases in per-process temporary directories.
rm -rf "${TMPDIR:-/tmp}"/timeline-fuzz-mcp-* "${TMPDIR:-/tmp}"/timeline-fuzz-cli-*
exit "$status"
