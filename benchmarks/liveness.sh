#!/usr/bin/env bash
# Issue 12's liveness checks with the demo on loopback, as an operator would see them:
#   1. pause:   the demo's W3 client runs 12 s against a --mode=server demo that is stopped with
#               SIGSTOP for 2 s in the middle and resumed; every RPC must succeed, and the client's
#               engine counters show RESENDs per silent peer per backoff step;
#   2. dead:    the server is stopped with SIGSTOP and never resumed; the pending calls fail with
#               UNAVAILABLE ("no packet ... for N ms (peer-silence-timeout 5000 ms)");
#   3. restart: that stopped server is killed with SIGKILL and a new one starts on the same port;
#               the same client (not restarted) is served again.
# Prints what it measured; exits non-zero if a check fails.
#
#   benchmarks/liveness.sh [--pause=2] [--port=4100]
set -euo pipefail
cd "$(dirname "$0")/.."

pause=2
port=4100
for arg in "$@"; do
  case "$arg" in
    --pause=*) pause=${arg#--pause=} ;;
    --port=*) port=${arg#--port=} ;;
    *) echo "liveness: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

jar=demo-services/target/demo-services.jar
if [[ ! -f "$jar" ]]; then
  ./mvnw -q -B -pl demo-services -am package -DskipTests
fi
out=$(mktemp -d)
java_opts=(-Xms256m -Xmx512m)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill -CONT "$pid" 2> /dev/null || true
    kill -9 "$pid" 2> /dev/null || true
  done
  rm -rf "$out"
}
trap cleanup EXIT

start_server() { # $1: log file
  java "${java_opts[@]}" -jar "$jar" --mode=server --port="$port" --kv-shards=1 \
    --homa.server.bind-address=127.0.0.1 > "$1" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  for _ in $(seq 1 120); do
    grep -q "listening on UDP" "$1" && return 0
    sleep 0.5
  done
  cat "$1"
  echo "liveness: the server did not start" >&2
  exit 1
}

failed=0

# Waits until the client's measured run has reached its Nth second (its progress lines), so that a
# slow JVM start (seconds on a busy machine) never moves the fault into the warm-up.
await_run_second() { # $1: client log, $2: second
  for _ in $(seq 1 240); do
    grep -qE "^ +$2\.0 s " "$1" && return 0
    sleep 0.25
  done
  echo "liveness: the client's run did not start" >&2
  exit 1
}

echo "== 1. pause: server stopped for ${pause} s during a 12 s W3 run"
start_server "$out/server1.log"
java "${java_opts[@]}" -jar "$jar" --mode=client --peer=127.0.0.1:"$port" --workload=w3 --duration=12s \
  --warmup=1s > "$out/client1.log" 2>&1 &
client_pid=$!
pids+=("$client_pid")
await_run_second "$out/client1.log" 4 # the pause lands mid-run
kill -STOP "$server_pid"
echo "server stopped at $(date +%T.%N | cut -c1-12)"
sleep "$pause"
kill -CONT "$server_pid"
echo "server resumed at $(date +%T.%N | cut -c1-12)"
wait "$client_pid" || true
grep -E "^Total: |RPCs failed|Homa client engine" "$out/client1.log" || { cat "$out/client1.log"; exit 1; }
if grep -q "RPCs failed" "$out/client1.log"; then
  echo "CHECK FAILED: RPCs failed across a ${pause} s pause"
  failed=1
else
  echo "check passed: 0 failed RPCs across a ${pause} s pause"
fi
kill -9 "$server_pid" 2> /dev/null || true
wait "$server_pid" 2> /dev/null || true

echo "== 2. dead: server stopped and never resumed; 3. restart: killed, a new one on the same port"
start_server "$out/server2.log"
java "${java_opts[@]}" -jar "$jar" --mode=client --peer=127.0.0.1:"$port" --workload=w3 --duration=24s \
  --warmup=1s --rpc-timeout=30s > "$out/client2.log" 2>&1 &
client_pid=$!
pids+=("$client_pid")
await_run_second "$out/client2.log" 3
kill -STOP "$server_pid"
stopped_ms=$(date +%s%3N)
echo "server stopped for good at $(date +%T.%N | cut -c1-12)"
sleep 8
kill -9 "$server_pid"
wait "$server_pid" 2> /dev/null || true
start_server "$out/server3.log"
echo "a new server on port $port at $(( ($(date +%s%3N) - stopped_ms) / 1000 )) s after the stop"
wait "$client_pid" || true
grep -E "^Total: |RPCs failed|Homa client engine" "$out/client2.log" || { cat "$out/client2.log"; exit 1; }
first=$(grep -E "RPCs failed" "$out/client2.log" || true)
if [[ "$first" =~ HomaTimeoutException.*no\ packet\ from.*for\ ([0-9]+)\ ms\ \(peer-silence-timeout\ ([0-9]+)\ ms\) ]]; then
  silence=${BASH_REMATCH[1]}
  budget=${BASH_REMATCH[2]}
  echo "first failure after ${silence} ms of silence (budget ${budget} ms): UNAVAILABLE"
  if (( silence > budget + 1000 )); then
    echo "CHECK FAILED: failed later than the budget plus one backoff step"
    failed=1
  fi
else
  echo "CHECK FAILED: the stopped server's calls did not fail with a silence timeout"
  failed=1
fi
# The restarted server must have served the same client: each of its last 3 seconds of progress
# (lines "  24.0 s   N RPCs   R RPCs/s   F failures") shows calls completing. (A total compared with
# run 1's rate failed whenever the machine ran slower in the second run than in the first.)
total2=$(grep -E "^Total: " "$out/client2.log" | sed -E 's/^Total: ([0-9,]+) RPCs.*/\1/' | tr -d , || true)
rates=$(grep -E "^ +[0-9]+\.0 s " "$out/client2.log" | tail -3 | sed -E 's/.* RPCs +([0-9,]+) RPCs\/s.*/\1/' | tr -d , | tr '\n' ' ' || true)
echo "client: ${total2:-0} RPCs in its 24 s run; RPC/s in its last 3 seconds: ${rates:-none}"
served=0
for rate in $rates; do
  (( rate > 0 )) && served=$((served + 1))
done
if (( served < 3 )); then
  echo "CHECK FAILED: the restarted server did not serve the same client again"
  failed=1
else
  echo "check passed: the same client was served again by the restarted server"
fi
exit "$failed"
