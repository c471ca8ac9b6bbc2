#!/bin/sh
# Runs test files with the wall clock at a chosen instant, through libfaketime
# (Debian: apt-get install faketime), to check that they pass at any hour:
#
#   scripts/test-at.sh '00:30' services/api            # today, 00:30 UTC
#   scripts/test-at.sh '2026-12-31 23:59:30' services/api/analytics.int.test.ts
#
# The first argument is an instant as `date -d` reads it, in UTC; the rest go to
# `vitest run`. The clock is shifted, not frozen: it runs on from that instant.
# The test files' processes (vitest's forks, and what they start: PGlite, child
# services) are shifted by the same offset, through vitest.at.config.ts. Not
# shifted: the run's own process with the embedded ClickHouse (chDB keeps the real
# clock whatever libfaketime does, and its timed waits hang under it), and servers
# started outside the run, such as the machine's Postgres. Monotonic clocks
# (timers) are left alone. No build is run: `npm run build` first for tests of dist/.
set -eu

if [ $# -lt 1 ]; then
  echo "usage: $0 <instant, UTC> [vitest arguments...]" >&2
  exit 2
fi
at=$1
shift

lib=
for candidate in /usr/lib/*/faketime/libfaketimeMT.so.1 /usr/lib/faketime/libfaketimeMT.so.1 /usr/local/lib/faketime/libfaketimeMT.so.1; do
  if [ -r "$candidate" ]; then
    lib=$candidate
    break
  fi
done
if [ -z "$lib" ]; then
  echo "libfaketime is not installed (Debian: apt-get install faketime)" >&2
  exit 2
fi

target=$(date -u -d "$at" +%s)
offset=$((target - $(date -u +%s)))
sign=+
[ "$offset" -lt 0 ] && sign=
echo "test-at: wall clock at $(date -u -d "@$target" '+%Y-%m-%d %H:%M:%S') UTC (offset ${sign}${offset} s), via $lib" >&2

TEST_AT_PRELOAD=$lib TEST_AT_OFFSET="${sign}${offset}" exec npx vitest run --config vitest.at.config.ts "$@"
