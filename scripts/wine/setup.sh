# shellcheck shell=bash
# Running Windows programs under Wine, for scripts/ci-windows.sh and scripts/ci-release-check.sh.
# Source it from the repository root after scripts/ci-tools.sh, then call wine_setup.
#
# wine_setup: mingw-w64 and Wine (installed with apt-get when running as root, else a loud failure),
# the x86_64-pc-windows-gnu standard library, a Wine prefix under target/wine, one persistent
# wineserver until the calling script exits, cargo's runner for that target, and the
# bcryptprimitives.dll shim (target/wine/bcryptprimitives.dll).
# wine_shim_into DIR...: put the shim beside the .exe files in each DIR.

wine_target=x86_64-pc-windows-gnu
wine_shim="$ci_root/target/wine/bcryptprimitives.dll"

wine_setup() {
  local missing=()
  command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=(mingw-w64)
  command -v wine >/dev/null 2>&1 || missing+=(wine wine64)
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "installing ${missing[*]} (apt-get)"
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >/dev/null ||
        ci_missing "${missing[*]}" "Run: apt-get install -y mingw-w64 wine wine64"
    else
      ci_missing "${missing[*]}" "Run (as root): apt-get install -y mingw-w64 wine wine64"
    fi
  fi
  ci_target "$wine_target"
  # WINEDLLOVERRIDES: no Mono or Gecko installer is asked for when the prefix is made.
  export WINEPREFIX="$ci_root/target/wine/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
  mkdir -p "$ci_root/target/wine"
  if [ ! -f "$WINEPREFIX/system.reg" ]; then
    echo "making the Wine prefix $WINEPREFIX"
    wineboot -i >/dev/null 2>&1 || ci_missing "a working Wine" "wineboot -i failed; try it by hand with WINEDEBUG unset"
  fi
  # One server for the whole script: without it every wine call starts and stops its own (a second
  # or more each, instead of ~40 ms).
  # (It exits 2, changing nothing, when a server for this prefix is already running.)
  wineserver -p || [ $? -eq 2 ] || ci_missing "a working wineserver" "wineserver -p failed for $WINEPREFIX"
  trap 'wineserver -k >/dev/null 2>&1 || true' EXIT
  # Start the prefix's services (winedevice.exe and the like) now, with their output to /dev/null:
  # started by the first program run inside "$(...)", they would keep its pipe open after it exits,
  # and the capture would wait for them for ever (seen when the prefix was made by an earlier stage).
  wineboot </dev/null >/dev/null 2>&1 || ci_missing "a working Wine" "wineboot failed for $WINEPREFIX; try it by hand with WINEDEBUG unset"
  # Wine 8 has no bcryptprimitives.dll, whose ProcessPrng Rust's standard library calls.
  local src="$ci_root/scripts/wine/bcryptprimitives"
  if [ ! -f "$wine_shim" ] || [ "$src.c" -nt "$wine_shim" ] || [ "$src.def" -nt "$wine_shim" ]; then
    x86_64-w64-mingw32-gcc -shared -O2 -o "$wine_shim" "$src.c" "$src.def" ||
      ci_missing "the bcryptprimitives.dll shim" "x86_64-w64-mingw32-gcc could not build scripts/wine/bcryptprimitives.c"
  fi
  echo "$(wine --version), $(x86_64-w64-mingw32-gcc --version | head -1)"
}

wine_shim_into() {
  local dir
  for dir in "$@"; do cp "$wine_shim" "$dir/"; done
}
