#!/usr/bin/env bash
# Local release check, run by .ci/run: what a release engineer would try before tagging.
#
#   1. cargo-dist is the pinned version (scripts/ci-tools.env = dist-workspace.toml) and
#      `dist generate --check` passes (release.yml is exactly what dist generates);
#   2. `dist plan` lists exactly the four platform archives, their checksums and sha256.sum, and takes
#      the release notes from CHANGELOG.md's section for this version;
#   3. `dist build --artifacts=local` for this machine's target builds an archive whose checksum holds
#      and whose contents are exactly the two binaries, the licence texts, README, the man page and the
#      completion scripts (equal to the checked-in files), in one top-level folder;
#   4. from the unpacked folder: both binaries print their version, `tl create` and `tl append` work on
#      a new database, `tl-mcp` answers an MCP initialize request, `tl man` and `tl completions` print
#      the files the archive carries, and the archive's bash completion offers the new node ID;
#   4b. the Windows archive: a zip of the x86_64-pc-windows-gnu release build with dist's layout (the
#      stand-in for the MSVC archive the release pipeline builds on a Windows runner) holds the same
#      files, and its unpacked tl.exe and tl-mcp.exe pass the checks of 4 under Wine (but the bash one);
#   5. actionlint passes on .github/workflows/.
#
# Tools are installed under target/ci-tools (scripts/ci-tools.sh). Prints one line per check and
# "release-check: N passed, N failed"; exits non-zero when any failed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ci-tools.sh

passed=0
failed=0
ok() { printf 'release-check: ok   %s\n' "$1"; passed=$((passed + 1)); }
bad() { printf 'release-check: FAIL %s\n' "$1"; failed=$((failed + 1)); }
# expect WHAT EXPECTED ACTUAL
expect() {
  if [ "$2" == "$3" ]; then ok "$1"; else bad "$1"; printf '  expected: %s\n  actual:   %s\n' "$2" "$3"; fi
}

command -v python3 >/dev/null 2>&1 ||
  ci_missing "python3" "The release check reads dist's JSON with python3 (Debian: apt-get install python3)."
dist=$(ci_cargo_tool cargo-dist "$CARGO_DIST_VERSION" dist)
actionlint=$(ci_actionlint)
version=$(cargo metadata --no-deps --format-version 1 --locked |
  python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"]=="timeline"))')
host=$(rustc -vV | sed -n 's/^host: //p')
echo "release-check: $("$dist" --version), $("$actionlint" --version | head -1), timeline $version, host $host"

# --- 1. pinned version, generated workflow ---
pinned=$(sed -n 's/^cargo-dist-version = "\(.*\)"$/\1/p' dist-workspace.toml)
expect "dist-workspace.toml pins cargo-dist $CARGO_DIST_VERSION like scripts/ci-tools.env" "$CARGO_DIST_VERSION" "$pinned"
if "$dist" generate --check; then
  ok "dist generate --check: .github/workflows/release.yml is what dist generates"
else
  bad "dist generate --check (run: target/ci-tools/bin/dist generate, and commit the result)"
fi

# --- 2. the plan ---
plan=$("$dist" plan --output-format=json 2>/dev/null |
  python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["artifacts"])))')
expected_plan=$(for t in aarch64-apple-darwin x86_64-apple-darwin x86_64-unknown-linux-gnu; do
    echo "timeline-$t.tar.gz timeline-$t.tar.gz.sha256"
  done
  echo "timeline-x86_64-pc-windows-msvc.zip timeline-x86_64-pc-windows-msvc.zip.sha256 sha256.sum")
expected_plan=$(echo $expected_plan | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')
expect "dist plan: the four archives, their checksums and sha256.sum" "$expected_plan" "$plan"
# The release notes: dist takes the section of CHANGELOG.md whose heading names the tagged version.
notes=$("$dist" plan --tag "v$version" --output-format=json 2>/dev/null |
  python3 -c 'import json,sys; print((json.load(sys.stdin).get("announcement_changelog") or "").strip())')
expected_notes=$(python3 -c '
import sys
lines, out, inside = open("CHANGELOG.md", encoding="utf-8").read().splitlines(), [], False
for line in lines:
    if line.startswith("## "):
        inside = line.split()[1] == sys.argv[1]
    elif inside:
        out.append(line)
print("\n".join(out).strip())' "$version")
if [ -n "$expected_notes" ]; then
  expect "dist plan --tag v$version: the release notes are CHANGELOG.md's $version section" "$expected_notes" "$notes"
else
  bad "CHANGELOG.md has a section \"## $version - DATE\" for the release notes"
fi

# --- 3. the host archive ---
case "$host" in
  *windows*) ext=zip ;;
  *) ext=tar.gz ;;
esac
archive="target/distrib/timeline-$host.$ext"
rm -f "$archive" "$archive.sha256"
if "$dist" build --artifacts=local --target "$host" >target/release-check-build.log 2>&1; then
  ok "dist build --artifacts=local --target $host"
else
  tail -30 target/release-check-build.log
  bad "dist build --artifacts=local --target $host (log: target/release-check-build.log)"
fi
[ -f "$archive" ] || { bad "the archive $archive exists"; echo "release-check: $passed passed, $failed failed"; exit 1; }
expect "the archive's .sha256 matches it" \
  "$(sha256sum "$archive" | cut -d' ' -f1)" "$(cut -d' ' -f1 <"$archive.sha256")"

work="target/release-check"
rm -rf "$work"
mkdir -p "$work"
if [ "$ext" = zip ]; then
  python3 -m zipfile -e "$archive" "$work"
else
  tar -xzf "$archive" -C "$work"
fi
exe=""
[ "$ext" = zip ] && exe=".exe"
# check_contents WORK DIR EXE: what an unpacked archive holds.
check_contents() {
  local work=$1 dir=$2 exe=$3 contents expected_contents same=0 f
  contents=$(cd "$work" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ' | sed 's/ $//')
  expected_contents=$(printf '%s\n' "$dir/tl$exe" "$dir/tl-mcp$exe" "$dir/LICENSE-MIT" "$dir/LICENSE-APACHE" \
    "$dir/README.md" "$dir/man/tl.1" "$dir/completions/_tl" "$dir/completions/_tl.ps1" \
    "$dir/completions/tl.bash" "$dir/completions/tl.elv" "$dir/completions/tl.fish" |
    sort | tr '\n' ' ' | sed 's/ $//')
  expect "the archive holds exactly: one folder $dir/ with tl, tl-mcp, licences, README, man page, completions" \
    "$expected_contents" "$contents"
  for f in LICENSE-MIT LICENSE-APACHE README.md; do cmp -s "$f" "$work/$dir/$f" || same=1; done
  cmp -s generated/man/tl.1 "$work/$dir/man/tl.1" || same=1
  for f in generated/completions/*; do cmp -s "$f" "$work/$dir/completions/$(basename "$f")" || same=1; done
  expect "its licence texts, README, man page and completions equal the checked-in files" 0 "$same"
}
dir="timeline-$host"
check_contents "$work" "$dir" "$exe"

# --- 4. the unpacked programs ---
# check_programs WORK DIR EXE [RUNNER...]: the unpacked programs work (run through RUNNER, e.g. wine).
check_programs() {
  local work=$1 dir=$2 exe=$3
  shift 3
  local run=("$@")
  # (env: a first element for "${run[@]}" when there is no runner.)
  [ "${#run[@]}" -gt 0 ] || run=(env)
  local tl="$work/$dir/tl$exe" mcp="$work/$dir/tl-mcp$exe" db="$PWD/$work/check.timeline.json"
  local initialize instructions same pair reply
  expect "tl --version" "tl $version" "$("${run[@]}" "$tl" --version 2>&1 || true)"
  expect "tl-mcp --version" "tl-mcp $version" "$("${run[@]}" "$mcp" --version 2>&1 || true)"
  expect "tl create on a new database" '{"timeline_id":"tl0"}' "$(env -u TIMELINE_DB "${run[@]}" "$tl" --db "$db" create 2>&1 || true)"
  expect "tl append" '{"node":"n1"}' \
    "$(env -u TIMELINE_DB "${run[@]}" "$tl" --db "$db" append --role user --text 'Plan a release' 2>&1 || true)"
  initialize='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"release-check","version":"1.0.0"}}}'
  # The answer carries the spec's instructions for the model (spec/timeline.json, mcp_instructions).
  instructions=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["mcp_instructions"]))' spec/timeline.json)
  expect "tl-mcp answers an MCP initialize request" \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{\"listChanged\":false}},\"serverInfo\":{\"name\":\"timeline\",\"version\":\"$version\"},\"instructions\":$instructions}}" \
    "$(echo "$initialize" | env -u TIMELINE_DB "${run[@]}" "$mcp" --db "$db" 2>/dev/null | head -1 || true)"
  if "${run[@]}" "$tl" man | cmp -s - "$work/$dir/man/tl.1"; then ok "tl man prints the archive's man page"; else bad "tl man prints the archive's man page"; fi
  same=0
  for pair in bash:tl.bash zsh:_tl fish:tl.fish powershell:_tl.ps1 elvish:tl.elv; do
    "${run[@]}" "$tl" completions "${pair%%:*}" | cmp -s - "$work/$dir/completions/${pair#*:}" || same=1
  done
  expect "tl completions SHELL prints the archive's completion files" 0 "$same"
  # The bash script calls `tl` back at each Tab; Windows has no bash completion to check.
  [ -z "$exe" ] || return 0
  # At a Tab the archive's bash script asks the unpacked tl, which reads the node IDs from the database.
  reply=$(PATH="$PWD/$work/$dir:$PATH" bash --norc -c \
    'source "$1"; COMP_WORDS=(tl --db "$2" context --node ""); COMP_CWORD=5; COMP_TYPE=9
     _clap_complete_tl tl "" --node; printf "%s\n" "${COMPREPLY[@]}"' \
    bash "$work/$dir/completions/tl.bash" "$db" 2>&1 || true)
  expect "the archive's bash completion offers the database's node IDs" "n1" "$reply"
}
check_programs "$work" "$dir" "$exe"

# --- 4b. the Windows archive, under Wine ---
# The release pipeline builds timeline-x86_64-pc-windows-msvc.zip on a Windows runner (release.yml);
# here the x86_64-pc-windows-gnu build (mingw-w64) stands in for it: a zip with dist's layout, built
# from the same files dist includes, whose programs run under Wine (scripts/wine/setup.sh).
source scripts/wine/setup.sh
wine_setup
wdir="timeline-$wine_target"
wzip="$PWD/target/distrib/$wdir.zip"
wstage="target/release-check-windows-stage"
rm -rf "$wstage" "$wzip"
if cargo build --release --locked --target "$wine_target" --bins >target/release-check-windows-build.log 2>&1; then
  ok "cargo build --release --target $wine_target (the stand-in for the MSVC build)"
else
  tail -30 target/release-check-windows-build.log
  bad "cargo build --release --target $wine_target (log: target/release-check-windows-build.log)"
fi
mkdir -p "$wstage/$wdir/man" "$wstage/$wdir/completions" target/distrib
cp "target/$wine_target/release/tl.exe" "target/$wine_target/release/tl-mcp.exe" \
  LICENSE-MIT LICENSE-APACHE README.md "$wstage/$wdir/" 2>/dev/null || true
cp generated/man/tl.1 "$wstage/$wdir/man/"
cp generated/completions/* "$wstage/$wdir/completions/"
(cd "$wstage" && python3 -m zipfile -c "$wzip" "$wdir")
wwork="target/release-check-windows"
rm -rf "$wwork"
mkdir -p "$wwork"
python3 -m zipfile -e "$wzip" "$wwork"
check_contents "$wwork" "$wdir" .exe
# The shim goes beside the unpacked programs only after the contents were checked.
wine_shim_into "$wwork/$wdir"
check_programs "$wwork" "$wdir" .exe wine

# --- 5. the workflows ---
if "$actionlint" .github/workflows/*.yml; then
  ok "actionlint .github/workflows/ (no errors, no deprecated actions)"
else
  bad "actionlint .github/workflows/"
fi

echo "release-check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
