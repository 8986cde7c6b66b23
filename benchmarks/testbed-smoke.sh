#!/usr/bin/env bash
# A short run across the emulated rack (benchmarks/testbed.sh, issue 16): up with 4 hosts at a real
# 1500-byte MTU, then the load generator on host 1 measures Homa's S1 (unloaded 100 B echoes to host
# 2) and one S8 point (N concurrent RPCs fanned out over hosts 2-4), then the rack comes down.
# Prints S1's p50, S8's completion time, failed calls and the packets the switch and NIC queues
# dropped; skips (exit 0, saying why) where namespaces cannot be made. Fails if the rack cannot be
# built or torn down, or if a scenario did not run; speed is reported, not judged (issue 13 and the
# testbed report own the figures).
#
#   benchmarks/testbed-smoke.sh [--fanout=1000]
set -euo pipefail
cd "$(dirname "$0")/.."

fanout=1000
for arg in "$@"; do
  case "$arg" in
    --fanout=*) fanout=${arg#--fanout=} ;;
    *) echo "testbed-smoke: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

if ! reason=$(benchmarks/testbed.sh check); then
  echo "testbed smoke SKIPPED: $reason"
  exit 0
fi
out=benchmarks/target/testbed-smoke
rm -rf "$out"
trap 'benchmarks/testbed.sh down' EXIT
benchmarks/testbed.sh up --hosts=4
benchmarks/run.sh quick --net=testbed --systems=homa --scenarios=s1,s6 --s6-fanouts="$fanout" --out="$out"
grep -E '^\| (S1|S6) ' "$out/report.md" | head -20 || true
java -cp "benchmarks/target/classes:$(cat benchmarks/target/run-classpath.txt)" io.homa.bench.report.SmokeLine "$out"
