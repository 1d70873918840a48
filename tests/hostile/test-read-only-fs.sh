#!/bin/sh
# Issue 14: "a store on a read-only filesystem cannot even be read". A store written on a tmpfs,
# the tmpfs remounted read-only (as a snapshot or a read-only NFS export would be): runs, tags
# and series must read, and nothing is written. Needs root (mount); elsewhere skipped (exit 77).
set -eu
cli="$1"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to mount a tmpfs"; exit 77; }
work=$(mktemp -d)
mnt="$work/ro"
mkdir "$mnt"
if ! mount -t tmpfs -o size=16m tmpfs "$mnt" 2>/dev/null; then
  rmdir "$mnt"; rm -rf "$work"; echo "SKIP: cannot mount a tmpfs here"; exit 77
fi
cleanup() { umount "$mnt" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

mkdir "$work/run"
printf '{"step": 1, "data": {"actor/pg_loss": 0.5}}\n{"step": 2, "data": {"actor/pg_loss": 0.25}}\n' \
  >"$work/run/metrics.jsonl"
"$cli" ingest --quiet --db "$mnt/store.db" "$work/run"
# the writer has exited; the WAL was checkpointed away, as after any ingest
mount -o remount,ro "$mnt"
"$cli" runs --db "$mnt/store.db" >"$work/runs.txt" 2>&1 || { cat "$work/runs.txt"; echo "FAIL: runs on a read-only filesystem"; exit 1; }
grep -q "run" "$work/runs.txt" || { cat "$work/runs.txt"; echo "FAIL: the run is not listed"; exit 1; }
"$cli" export --run run --db "$mnt/store.db" --format csv >"$work/out.csv" 2>&1 || { cat "$work/out.csv"; echo "FAIL: export on a read-only filesystem"; exit 1; }
grep -q "0.25" "$work/out.csv" || { cat "$work/out.csv"; echo "FAIL: the series was not read"; exit 1; }
echo "ok: read on a read-only filesystem"
