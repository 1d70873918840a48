#!/bin/sh
# A real full disk: the store lives on a 2 MiB tmpfs while a 6 MB demo run is ingested.
# Expected: `ingest` fails with a clear "disk full" message naming the store (exit 1), the store
# passes PRAGMA integrity_check and holds only whole files' chunks; once there is space again a
# rerun gives exactly the store of a clean ingest (compared through `driftwatch-cli export`).
# Needs root (mount); elsewhere the test is skipped (exit 77).
set -eu
cli="$1"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to mount a tmpfs"; exit 77; }
command -v sqlite3 >/dev/null || { echo "SKIP: no sqlite3"; exit 77; }
work=$(mktemp -d)
mnt="$work/small"
mkdir "$mnt"
if ! mount -t tmpfs -o size=2m tmpfs "$mnt" 2>/dev/null; then
  rmdir "$mnt"; rm -rf "$work"; echo "SKIP: cannot mount a tmpfs here"; exit 77
fi
cleanup() { umount "$mnt" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

"$cli" demo "$work/run" --scenario collapse --steps 60 >/dev/null
"$cli" ingest --quiet --db "$work/clean.db" "$work/run"
"$cli" export --run run --db "$work/clean.db" --format csv >"$work/clean.csv"
"$cli" runs --db "$work/clean.db" >"$work/clean-runs.txt"

status=0
"$cli" ingest --quiet --db "$mnt/store.db" "$work/run" >"$work/out.txt" 2>&1 || status=$?
cat "$work/out.txt"
[ "$status" -eq 1 ] || { echo "FAIL: ingest on a full disk exited $status, expected 1"; exit 1; }
grep -q "$mnt/store.db" "$work/out.txt" || { echo "FAIL: the message does not name the store"; exit 1; }
grep -qi "disk full" "$work/out.txt" || { echo "FAIL: the message does not say the disk is full"; exit 1; }
check=$(sqlite3 "$mnt/store.db" "PRAGMA integrity_check")
[ "$check" = "ok" ] || { echo "FAIL: integrity_check on the full disk: $check"; exit 1; }

# space again: the rerun completes the store, equal to a clean ingest
mount -o remount,size=64m "$mnt"
"$cli" ingest --quiet --db "$mnt/store.db" "$work/run"
"$cli" export --run run --db "$mnt/store.db" --format csv >"$work/after.csv"
"$cli" runs --db "$mnt/store.db" >"$work/after-runs.txt"
cmp -s "$work/clean-runs.txt" "$work/after-runs.txt" || {
  echo "FAIL: runs (steps, batches) after the rerun differ from a clean ingest"
  diff "$work/clean-runs.txt" "$work/after-runs.txt"
  exit 1
}
cmp -s "$work/clean.csv" "$work/after.csv" || {
  echo "FAIL: store after the disk-full rerun differs from a clean ingest"
  diff "$work/clean.csv" "$work/after.csv" | head -5
  exit 1
}
check=$(sqlite3 "$mnt/store.db" "PRAGMA integrity_check")
[ "$check" = "ok" ] || { echo "FAIL: integrity_check after the rerun: $check"; exit 1; }
echo "ok: disk full reported, store intact, rerun equal to a clean ingest"
