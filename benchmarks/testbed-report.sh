#!/usr/bin/env bash
# The testbed report (issue 16): every benchmark across the emulated rack, then one README over the
# runs. As root, on a fresh clone:
#
#   benchmarks/testbed-report.sh [--out=benchmarks/results/testbed] [--quick] [testbed.sh up options]
#
# Brings the rack up (benchmarks/testbed.sh up, default 4 hosts, MTU 1500, 400 Mbit/s links), runs
#   full/                  S1-S6, every system (Homa with priorities and incast marking on)
#   s7-50/, s7-80/         S7, the paper's Figure 8: W3-W5 at 50% and 80% of the link, RPC systems
#   s7-80-clients/         S7 at 80% from every host but the server's at once (--s5-client-hosts)
#   s7-80-clients-no-priorities/  the same for Homa with its priorities off
#   s7-80-all-to-all/      S7 at 80% all-to-all: every host calls the servers of all the others (--s5-all-to-all)
#   s7-80-no-priorities/   the same at 80% for Homa with its priorities off
#   s8-no-incast-marking/  S6 (the paper's Figure 9) for Homa with incast marking off
# then writes README.md over them (io.homa.bench.report.TestbedSummary) and takes the rack down.
# --quick uses the load generator's quick plan (a few minutes in all; figures are rough).
set -euo pipefail
cd "$(dirname "$0")/.."

out=benchmarks/results/testbed
mode=full
up_options=()
for arg in "$@"; do
  case "$arg" in
    --out=*) out=${arg#--out=} ;;
    --quick) mode=quick ;;
    --hosts=*|--mtu=*|--link-mbps=*|--port-buffer-bytes=*) up_options+=("$arg") ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "testbed-report: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
if ! reason=$(benchmarks/testbed.sh check); then
  echo "testbed report SKIPPED: $reason"
  exit 0
fi
trap 'benchmarks/testbed.sh down' EXIT
benchmarks/testbed.sh up "${up_options[@]}"
mkdir -p "$out"
rpc_systems=homa,homa-rpc,grpc,rsocket
status=0
run() {
  local name=$1
  shift
  echo "== $name"
  benchmarks/run.sh "$mode" --net=testbed --out="$out/$name" "$@" || status=1
}
run full
s7=(--scenarios=s5 --workloads=w3,w4,w5)
run s7-50 --systems=$rpc_systems "${s7[@]}" --s5-link-load=0.5
run s7-80 --systems=$rpc_systems "${s7[@]}" --s5-link-load=0.8
run s7-80-no-priorities --systems=homa,homa-rpc "${s7[@]}" --s5-link-load=0.8 --homa-priority-tos=off
# The same from every host but the server's at once, so that several senders share its switch port.
clients=$(( $(sed -n 's/^HOSTS=//p' "/run/${HOMA_TESTBED_PREFIX:-homa}-testbed.env") - 1 ))
run s7-80-clients --systems=$rpc_systems "${s7[@]}" --s5-link-load=0.8 --s5-client-hosts=$clients
run s7-80-clients-no-priorities --systems=homa,homa-rpc "${s7[@]}" --s5-link-load=0.8 --s5-client-hosts=$clients \
  --homa-priority-tos=off
# All-to-all: every host sends to the servers of all the others, each link loaded 80% both ways.
run s7-80-all-to-all --systems=$rpc_systems "${s7[@]}" --s5-link-load=0.8 --s5-all-to-all
run s8-no-incast-marking --systems=homa,homa-rpc --scenarios=s6 --no-homa-incast-marking
java -cp "benchmarks/target/classes:$(cat benchmarks/target/run-classpath.txt)" \
  io.homa.bench.report.TestbedSummary "$out"
if [[ $status -eq 0 ]]; then
  rm -f "$out"/*/server-*.log # kept only when a run failed
fi
exit $status
