#!/usr/bin/env bash
# Issue 14's attacks, re-run against the demo's echo server on loopback (benchmarks/attacks/homa_attacks.py):
# builds the demo jar, then for each attack starts a fresh `--mode=server` demo, the demo's W3 client
# and a small Python Homa client beside it, runs the attack for a few seconds and prints what the
# attacker sent, what came back to the forged addresses, the legitimate clients' calls by status and
# the server's heap. Loopback only (forged sources in 127.0.0.0/8); needs root for the raw socket.
#
#   benchmarks/attacks.sh [all | ATTACK ...] [--port=4300] [--security=off|authenticate|encrypt] [--no-build]
#   ATTACK: forged-ack-floor ack-set-flood phantom-flood one-byte-flood zero-payload-flood
#           forged-resend unvalidated-resend forged-cutoffs overlapping-data
#
# Exit code: 0 when every selected attack ran (whatever the server did), 1 on a harness error
# (build failed, a process did not start, ...), 2 for bad arguments.
# The whole run holds /tmp/homa-build.lock (the build and the attacks), so that it neither builds
# nor measures while another job on this shared machine does.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${HOMA_ATTACKS_LOCKED:-}" ]]; then
  export HOMA_ATTACKS_LOCKED=1
  exec flock /tmp/homa-build.lock "$0" "$@"
fi

build=1
py_args=()
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --port=*) py_args+=(--port "${arg#--port=}") ;;
    --server-heap=*) py_args+=(--server-heap "${arg#--server-heap=}") ;;
    --security=*) py_args+=(--security "${arg#--security=}") ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "attacks.sh: unknown option '$arg'" >&2; exit 2 ;;
    *) py_args+=("$arg") ;;
  esac
done

jar=demo-services/target/demo-services.jar
if (( build )); then
  # Offline first (io.homa artifacts come from this reactor: -am); online if a dependency is missing.
  ./mvnw -o -q -B -pl demo-services -am -DskipTests package || ./mvnw -q -B -pl demo-services -am -DskipTests package \
    || { echo "attacks.sh: the build failed" >&2; exit 1; }
fi
[[ -f "$jar" ]] || { echo "attacks.sh: no $jar" >&2; exit 1; }
exec python3 benchmarks/attacks/homa_attacks.py --jar "$jar" "${py_args[@]}"
