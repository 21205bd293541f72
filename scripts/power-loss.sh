#!/usr/bin/env bash
# The power-loss suite alone (docs/contributing.md, "Power loss"; results in docs/storage.md):
#   scripts/power-loss.sh [--cuts N] [--seed S] [TEST FILTER]
# e.g. scripts/power-loss.sh --cuts 100000 power_loss::sqlite_kept_log
# Needs /dev/fuse, fusermount3 and sqlite3 (Debian: apt-get install fuse3 sqlite3).
set -euo pipefail
cd "$(dirname "$0")/.."
filter=power_loss::
while [ $# -gt 0 ]; do
  case "$1" in
    --cuts) export TIMELINE_POWER_CUTS=$2; shift 2 ;;
    --seed) export TIMELINE_POWER_SEED=$2; shift 2 ;;
    -h | --help) sed -n '2,5p' "$0"; exit 0 ;;
    power_loss::*) filter=$1; shift ;;
    *) echo "power-loss.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
exec cargo test --locked --test suite "$filter" -- --nocapture
