#!/bin/sh
# Two processes ingest two runs into the same store at the same moment: the store's write lock
# makes one wait for the other (one transaction per chunk, so the waits are short); both must
# succeed and the store must equal one where the runs were ingested one after the other.
set -eu
cli="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cli" demo "$work/a" --scenario collapse --steps 80 --seed 1 >/dev/null
"$cli" demo "$work/b" --scenario healthy --steps 80 --seed 2 >/dev/null
"$cli" ingest --quiet --db "$work/serial.db" "$work/a"
"$cli" ingest --quiet --db "$work/serial.db" "$work/b"

# small chunks: many commits, so the two writers really interleave
chunk="--chunk-bytes 4096"
"$cli" ingest --quiet $chunk --db "$work/both.db" "$work/a" >"$work/a.out" 2>&1 &
pa=$!
"$cli" ingest --quiet $chunk --db "$work/both.db" "$work/b" >"$work/b.out" 2>&1 &
pb=$!
sa=0; sb=0
wait $pa || sa=$?
wait $pb || sb=$?
cat "$work/a.out" "$work/b.out"
[ "$sa" -eq 0 ] && [ "$sb" -eq 0 ] || { echo "FAIL: concurrent ingests exited $sa and $sb"; exit 1; }
for r in a b; do
  "$cli" export --run "$r" --db "$work/serial.db" --format csv >"$work/serial-$r.csv"
  "$cli" export --run "$r" --db "$work/both.db" --format csv >"$work/both-$r.csv"
  cmp -s "$work/serial-$r.csv" "$work/both-$r.csv" || { echo "FAIL: run $r differs"; exit 1; }
done
"$cli" runs --db "$work/serial.db" | sort >"$work/serial-runs.txt"
"$cli" runs --db "$work/both.db" | sed 's/^ *[0-9]*//' | sort >"$work/both-runs.txt"
sed 's/^ *[0-9]*//' "$work/serial-runs.txt" | sort >"$work/serial-runs2.txt"
cmp -s "$work/serial-runs2.txt" "$work/both-runs.txt" || {
  echo "FAIL: runs differ"; diff "$work/serial-runs2.txt" "$work/both-runs.txt"; exit 1; }
echo "ok: two concurrent writers, store equal to serial ingests"
