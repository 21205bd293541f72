#!/usr/bin/env bash
# Interop check of tl-mcp with the official MCP SDK clients (Python and TypeScript).
#
# Installs everything it needs under target/interop/ (a Python venv and a node_modules folder, pinned by
# tests/interop/requirements.txt and tests/interop/package-lock.json), runs each client against the
# tl-mcp binary with a fresh temporary database, prints one PASS/FAIL line per client and exits non-zero
# if any failed. Called by .ci/run after the release build; also runs by hand:
#   bash scripts/ci-interop.sh            # builds and uses the debug binary
#   TL_MCP=/path/to/tl-mcp bash scripts/ci-interop.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$root/target/interop
interop=$root/tests/interop
mkdir -p "$work"

say() { printf 'interop: %s\n' "$*"; }

# --- the server binary ---
if [ -n "${TL_MCP:-}" ]; then
  bin=$TL_MCP
elif [ "${CI:-}" = "true" ]; then
  # .ci/run has just built the release binaries; this is a no-op then.
  cargo build --release --locked --quiet --bin tl-mcp
  bin=$root/target/release/tl-mcp
else
  cargo build --locked --quiet --bin tl-mcp
  bin=$root/target/debug/tl-mcp
fi
[ -x "$bin" ] || { say "FAIL: no tl-mcp binary at $bin"; exit 1; }
say "server: $bin ($("$bin" --version))"

tmp=$(mktemp -d "$work/run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
record() { if [ "$1" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi; }

# The SDKs offer their newest version; these runs make them offer each older one too.
versions=("" 2024-11-05 2025-03-26 2025-06-18)

# --- Python SDK ---
python_install() {
  # The first Python 3.10+ that can create a venv: $PYTHON if set, else python3 on PATH, else the system one.
  local python="" candidate
  for candidate in ${PYTHON:+"$PYTHON"} python3 /usr/bin/python3; do
    if "$candidate" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
      python=$candidate
      break
    fi
  done
  if [ -z "$python" ]; then
    say "FAIL: python interop needs Python 3.10 or newer with the venv module (Debian: python3-venv)"
    return 1
  fi
  local venv=$work/venv
  local stamp
  stamp=$(sha256sum "$interop/requirements.txt" | cut -d' ' -f1)
  if [ "$(cat "$venv/.installed" 2>/dev/null)" != "$stamp" ]; then
    say "installing the MCP Python SDK into $venv"
    rm -rf "$venv"
    "$python" -m venv "$venv" || { say "FAIL: cannot create a venv with $python"; return 1; }
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$interop/requirements.txt" || return 1
    echo "$stamp" > "$venv/.installed"
  fi
}

# --- TypeScript SDK ---
ts_install() {
  if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) < 18 ? 1 : 0)' 2>/dev/null; then
    say "FAIL: typescript interop needs Node.js 18 or newer (node and npm on PATH)"
    return 1
  fi
  local dir=$work/node
  local stamp
  stamp=$(cat "$interop/package.json" "$interop/package-lock.json" | sha256sum | cut -d' ' -f1)
  mkdir -p "$dir"
  if [ "$(cat "$dir/.installed" 2>/dev/null)" != "$stamp" ]; then
    say "installing the MCP TypeScript SDK into $dir"
    rm -rf "$dir/node_modules"
    cp "$interop/package.json" "$interop/package-lock.json" "$dir/"
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error || return 1
    echo "$stamp" > "$dir/.installed"
  fi
  # ES modules resolve packages from the script's own folder, so the client runs from there.
  cp "$interop/ts_client.mjs" "$dir/ts_client.mjs"
}

set +e
if python_install; then
  for v in "${versions[@]}"; do
    timeout 300 "$work/venv/bin/python" "$interop/python_client.py" "$bin" "$tmp/python${v}.json" ${v:+"$v"}
    record $?
  done
else
  say "FAIL: could not install the MCP Python SDK"
  record 1
fi
if ts_install; then
  for v in "${versions[@]}"; do
    timeout 300 node "$work/node/ts_client.mjs" "$bin" "$tmp/ts${v}.json" ${v:+"$v"}
    record $?
  done
else
  say "FAIL: could not install the MCP TypeScript SDK"
  record 1
fi
set -e
echo "interop: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
