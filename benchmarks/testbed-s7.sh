#!/usr/bin/env bash
# S7 (the paper's Figure 8) where the network, not the CPU, should set the figures: a rack of slow
# links, Homa's message and RPC layers, W3-W5 at 80% of the server's link from every other host at
# once, each workload run until it has enough calls for its shortest decile's tails. As root:
#
#   benchmarks/testbed-s7.sh [--out=benchmarks/results/testbed/s7-network] [--link-mbps=100]
#                            [--min-calls=10000] [--workloads=w3,w4,w5] [--quick]
#
# Brings the rack up at --link-mbps, runs into OUT/
#   poll/             busy polling on (the transport's default), with the timetrace
#   no-poll/          busy polling off, with the timetrace
#   no-priorities/    busy polling off, Homa's priorities off (one FIFO class)
# each with every S5 workload's CPU figures (a core above 80% marks the run CPU-bound) and, for the
# traced runs, where the shortest decile's time goes at p50 and p99; then takes the rack down.
# Hours with the defaults (W5 at 80% of 100 Mbit/s is about 25 calls/s); --quick for a smoke run.
set -euo pipefail
cd "$(dirname "$0")/.."

out=benchmarks/results/testbed/s7-network
link_mbps=100
min_calls=10000
workloads=w3,w4,w5
mode=full
for arg in "$@"; do
  case "$arg" in
    --out=*) out=${arg#--out=} ;;
    --link-mbps=*) link_mbps=${arg#--link-mbps=} ;;
    --min-calls=*) min_calls=${arg#--min-calls=} ;;
    --workloads=*) workloads=${arg#--workloads=} ;;
    --quick) mode=quick; min_calls=0 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "testbed-s7: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
if ! reason=$(benchmarks/testbed.sh check); then
  echo "testbed S7 SKIPPED: $reason"
  exit 0
fi
trap 'benchmarks/testbed.sh down' EXIT
benchmarks/testbed.sh up --link-mbps="$link_mbps"
clients=$(( $(sed -n 's/^HOSTS=//p' "/run/${HOMA_TESTBED_PREFIX:-homa}-testbed.env") - 1 ))
mkdir -p "$out"
status=0
run() {
  local name=$1
  shift
  echo "== $name"
  benchmarks/run.sh "$mode" --net=testbed --out="$out/$name" --systems=homa,homa-rpc --scenarios=s5 \
    --workloads="$workloads" --s5-link-load=0.8 --s5-client-hosts="$clients" --s5-min-calls="$min_calls" "$@" \
    || status=1
  rm -rf "$out/$name/timetrace" # hundreds of MB; the report keeps what they showed
}
run poll --homa-timetrace
run no-poll --homa-timetrace --homa-busy-poll-us=0
run no-priorities --homa-busy-poll-us=0 --homa-priority-tos=off
exit $status
