#!/usr/bin/env bash
# Runs the side-by-side load generator (issue 5): Homa (message and RPC layers), gRPC-java, RSocket-java
# and plain UDP/TCP ping-pong floors on scenarios S1-S6, S10 (streaming) and S11 (overload), and writes a report.
#
#   benchmarks/run.sh [quick|full] [extra args]     e.g.  benchmarks/run.sh quick --systems=homa,grpc --scenarios=s1
#   benchmarks/run.sh full --net=testbed             across the emulated rack (benchmarks/testbed.sh up first; root)
#
# quick: about 2 minutes (the CI smoke test); full: 10-15 minutes. Extra arguments go to the load
# generator (benchmarks/run.sh quick --help lists them). The report lands in benchmarks/target/report/
# unless --out=DIR is given (relative to the repository root). Builds what is needed first, so it works
# on a fresh clone. Exit code: 0 when the report was written and every selected scenario ran for every
# selected system (or is marked n/a), non-zero otherwise; speed figures never change it.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=quick
if [[ $# -gt 0 && ( "$1" == quick || "$1" == full ) ]]; then
  mode=$1
  shift
fi

classpath_file="$PWD/benchmarks/target/run-classpath.txt"
echo "building benchmarks and the modules it depends on ..."
./mvnw -q -B -pl benchmarks -am -Dmaven.test.skip=true package dependency:build-classpath \
  -Dmdep.outputFile="$classpath_file" -Dmdep.includeScope=runtime
# In a reactor build every module writes the file; benchmarks comes last, so it holds the benchmarks' class path.

out=benchmarks/target/report
for arg in "$@"; do
  case "$arg" in
    --out=*) out="${arg#--out=}" ;;
  esac
done

# --net=testbed: this process is the client on host 1 of the rack benchmarks/testbed.sh built; it
# starts the servers on the other hosts itself (ip netns exec), so it needs root as the rack does.
host_prefix=()
for arg in "$@"; do
  if [[ "$arg" == "--net=testbed" ]]; then
    prefix=${HOMA_TESTBED_PREFIX:-homa}
    if [[ $(id -u) -ne 0 ]]; then
      echo "--net=testbed needs root (the servers run in the testbed's network namespaces)" >&2
      exit 2
    fi
    if ! ip netns list 2> /dev/null | grep -q "^${prefix}-h1\b"; then
      echo "--net=testbed: the testbed is not up; run: benchmarks/testbed.sh up" >&2
      exit 2
    fi
    host_prefix=(ip netns exec "${prefix}-h1")
  fi
done

set +e
# The load generator's JVM as the servers' (ServerProcess): no sampled leak records in any
# system's Netty, which would cost the clients of the Netty-based systems a stack trace per 128 buffers.
"${host_prefix[@]}" java -Xms2g -Xmx2g -XX:+UseG1GC -XX:G1HeapRegionSize=4m -Djava.awt.headless=true \
  -Dio.netty.leakDetection.level=disabled -Dio.grpc.netty.shaded.io.netty.leakDetection.level=disabled \
  -cp "benchmarks/target/classes:$(cat "$classpath_file")" \
  io.homa.bench.LoadGenerator --mode="$mode" "$@"
status=$?
set -e
if [[ " $* " == *" --help "* || " $* " == *" -h "* || " $* " == *" --version "* ]]; then
  exit "$status"
fi
if [[ $status -eq 0 && ( ! -s "$out/report.json" || ! -s "$out/report.md" ) ]]; then
  echo "FAILED: the report is missing in $out" >&2
  exit 1
fi
exit "$status"
