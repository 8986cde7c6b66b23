#!/usr/bin/env bash
# JMH microbenchmarks of the Homa engine (io.homa.bench.jmh) with the GC profiler.
#
#   benchmarks/jmh.sh [quick|full] [REGEX...]
#
# quick (default): 1 fork, a few seconds per benchmark (about 2 minutes), a smoke run for CI.
# full: 2 forks, 5 x 2 s measured per benchmark, for real figures (about 12 minutes).
# REGEX: run only matching benchmarks, e.g. `benchmarks/jmh.sh full EngineReceive`.
# Results: benchmarks/target/jmh/jmh-result.json (JMH JSON) and jmh-summary.md (ns/op, B/op).
# Extra Maven flags (e.g. -o for offline) can be given in MAVEN_ARGS.
set -euo pipefail

mode="${1:-quick}"
if [[ "$mode" != quick && "$mode" != full ]]; then
  echo "usage: $0 [quick|full] [REGEX...]" >&2
  exit 2
fi
shift || true

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="$root/benchmarks/target/jmh"
mkdir -p "$out"

# Build the module and what it depends on, and write its runtime classpath.
./mvnw -q -B ${MAVEN_ARGS:-} -pl benchmarks -am -DskipTests package \
  org.apache.maven.plugins:maven-dependency-plugin:3.7.0:build-classpath \
  -Dmdep.includeScope=runtime -Dmdep.outputFile="$out/classpath.txt"

exec java -cp "$root/benchmarks/target/classes:$(cat "$out/classpath.txt")" \
  io.homa.bench.jmh.JmhMain "$mode" --out="$out" "$@"
