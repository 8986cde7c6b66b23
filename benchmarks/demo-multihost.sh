#!/usr/bin/env bash
# The multi-host demo with a service registry (issue 16), on the emulated rack of testbed.sh:
#   host 1: the registry, a Eureka server (demo-registry, HTTP port 8761);
#   hosts 2 and 3: key-value shards kv-0 and kv-1 (demo --mode=shard, profile eureka), each
#     registered with the Homa port it bound (homa.server.port=0) in its metadata "homa-port";
#   host 4: the aggregator, which finds the shards through Spring Cloud discovery and LoadBalancer,
#     and a watch that calls it for a key of each shard every 100 ms (demo --mode=watch).
# Once both shards answer and the key-value figures are printed, shard kv-1's JVM is killed
# (SIGKILL), then restarted. Checked, with the bounds below (exit 1 if one is missed):
#   - calls routed to kv-1 fail with a typed status within the liveness budget
#     (homa.protocol.peer-silence-timeout, 5 s) plus 1 s;
#   - the registry drops kv-1 (its calls then fail at once, UNAVAILABLE "no peer") within 10 s;
#   - every call to kv-0 is answered meanwhile (and at least one while kv-1 is down);
#   - calls reach the restarted kv-1 within 5 s of it being ready (registered), and within 60 s of
#     the restart command (its JVM's start-up included).
# Skips (exit 0, saying why) where namespaces cannot be made. Tears everything down on exit.
#
#   benchmarks/demo-multihost.sh [--rebuild] [--link-mbps=400]
#   HOMA_TESTBED_PREFIX=hdemo HOMA_TESTBED_SUBNET=198.18.5 benchmarks/demo-multihost.sh  # a second testbed
#
# Logs are kept in demo-services/target/multihost/.
set -euo pipefail
cd "$(dirname "$0")/.."

# The testbed's names and addresses, passed on to testbed.sh (which checks the subnet).
export HOMA_TESTBED_PREFIX=${HOMA_TESTBED_PREFIX:-homa}
export HOMA_TESTBED_SUBNET=${HOMA_TESTBED_SUBNET:-198.18.0}
prefix=$HOMA_TESTBED_PREFIX
subnet=$HOMA_TESTBED_SUBNET

# Bounds, in milliseconds.
liveness_budget_ms=5000                                 # homa.protocol.peer-silence-timeout (default)
detect_bound_ms=$(( liveness_budget_ms + 1000 ))        # + the watch's 100 ms interval and scheduling
registry_drop_bound_ms=10000                            # lease 2 s (counted twice) + eviction 1 s + fetch 1 s + cache 1 s, + slack
rejoin_bound_ms=5000                                    # ready -> answered: fetch 1 s + cache 1 s + registration, + slack
restart_bound_ms=60000                                  # restart command -> answered, JVM start-up included

rebuild=0
link_mbps=400
for arg in "$@"; do
  case "$arg" in
    --rebuild) rebuild=1 ;;
    --link-mbps=*) link_mbps=${arg#--link-mbps=} ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo-multihost: unknown option '$arg' (see: $0 --help)" >&2; exit 2 ;;
  esac
done
[[ "$link_mbps" =~ ^[0-9]+$ ]] && (( link_mbps >= 1 )) || { echo "demo-multihost: --link-mbps must be a positive number, was '$link_mbps'" >&2; exit 2; }

if ! reason=$(benchmarks/testbed.sh check); then
  echo "multi-host demo SKIPPED: $reason"
  exit 0
fi
command -v curl > /dev/null || { echo "demo-multihost: curl is needed (to ask the registry)" >&2; exit 1; }

demo_jar=demo-services/target/demo-services.jar
registry_jar=demo-registry/target/demo-registry.jar
if (( rebuild )) || [[ ! -f "$demo_jar" || ! -f "$registry_jar" ]]; then
  ./mvnw -q -B -pl demo-services,demo-registry -am package -DskipTests
fi

out=demo-services/target/multihost
rm -rf "$out"
mkdir -p "$out"
pids=()
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do
    kill "$pid" 2> /dev/null || true
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2> /dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
  done
  benchmarks/testbed.sh down > /dev/null || status=1
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
  echo "multi-host demo FAILED: $*"
  for log in "$out"/*.log; do
    echo "----- $log (last 25 lines)"
    tail -n 25 "$log"
  done
  exit 1
}

now_ms() { date +%s%3N; }

# wait_for FILE REGEX SECONDS: prints the first line of FILE matching REGEX, waiting up to SECONDS.
wait_for() {
  local file=$1 regex=$2 deadline=$(( SECONDS + $3 )) line
  while (( SECONDS < deadline )); do
    if line=$(grep -E -m1 -- "$regex" "$file" 2> /dev/null); then
      echo "$line"
      return 0
    fi
    alive || return 1
    sleep 0.2
  done
  return 1
}

# first_event FILE SHARD KIND AFTER_MS [TEXT]: prints the first "event" line of SHARD with KIND
# (answering / failing) stamped after AFTER_MS and containing TEXT, waiting up to 120 s.
first_event() {
  local file=$1 shard=$2 kind=$3 after_ms=$4 text=${5:-} deadline=$(( SECONDS + 120 )) line
  while (( SECONDS < deadline )); do
    line=$(awk -v shard="$shard" -v kind="$kind" -v after="$after_ms" -v text="$text" \
      '$1 == "event" && $3 == shard && $4 == kind && $2 * 1000 >= after && (text == "" || index($0, text)) { print; exit }' "$file")
    if [[ -n "$line" ]]; then
      echo "$line"
      return 0
    fi
    alive || return 1
    sleep 0.1
  done
  return 1
}

# The processes that must be running (name=pid), checked while waiting.
declare -A running=()
alive() {
  local name
  for name in "${!running[@]}"; do
    if ! kill -0 "${running[$name]}" 2> /dev/null; then
      echo "demo-multihost: $name (pid ${running[$name]}) died" >&2
      return 1
    fi
  done
}

java_opts=(-Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1)
registry_url="http://$subnet.1:8761/eureka/"
homa_opts=(--spring.profiles.active=eureka "--eureka.client.service-url.defaultZone=$registry_url"
  "--homa.protocol.link-mbps=$link_mbps")

# start_shard SHARD HOST LOG: a key-value shard on host HOST, on a free Homa port.
start_shard() {
  local shard=$1 host=$2 log=$3
  ip netns exec "$prefix-h$host" java "${java_opts[@]}" -jar "$demo_jar" --mode=shard --shard="$shard" \
    --homa.server.port=0 --homa.server.bind-address="$subnet.$host" --eureka.instance.ip-address="$subnet.$host" \
    "${homa_opts[@]}" >> "$log" 2>&1 &
  pids+=($!)
  running[kv-$shard]=$!
}

echo "Multi-host demo on testbed $prefix ($subnet.0/24, $link_mbps Mbit/s links): registry on h1 ($subnet.1:8761)," \
  "kv-0 on h2, kv-1 on h3, aggregator and watch on h4"
benchmarks/testbed.sh up --hosts=4 --link-mbps="$link_mbps" > "$out/testbed.log"

ip netns exec "$prefix-h1" java "${java_opts[@]}" -jar "$registry_jar" --server.address="$subnet.1" \
  > "$out/registry.log" 2>&1 &
pids+=($!)
running[registry]=$!
started_ms=$(now_ms)
registry_up=0
for _ in $(seq 1 600); do
  if ip netns exec "$prefix-h4" curl -sf -m 2 -o /dev/null -H 'Accept: application/json' "${registry_url}apps"; then
    registry_up=1
    break
  fi
  alive || fail "a JVM died while the registry started"
  sleep 0.2
done
(( registry_up )) || fail "the registry did not answer at ${registry_url}apps"
echo "Registry answering after $(( $(now_ms) - started_ms )) ms"

start_shard 0 2 "$out/kv-0.log"
start_shard 1 3 "$out/kv-1.log"

for shard in 0 1; do
  line=$(wait_for "$out/kv-$shard.log" "^Key-value shard kv-$shard serving" 180) || fail "shard kv-$shard did not start"
  echo "$line"
done
listed=0
for _ in $(seq 1 300); do
  if ip netns exec "$prefix-h4" curl -sf -m 2 -o /dev/null -H 'Accept: application/json' "${registry_url}apps/KV-0" \
      && ip netns exec "$prefix-h4" curl -sf -m 2 -o /dev/null -H 'Accept: application/json' "${registry_url}apps/KV-1"; then
    listed=1
    break
  fi
  alive || fail "a JVM died while the shards registered"
  sleep 0.2
done
(( listed )) || fail "the registry does not list both shards"
echo "Registry lists kv-0 and kv-1 $(( $(now_ms) - started_ms )) ms after it was started"

ip netns exec "$prefix-h4" java "${java_opts[@]}" -jar "$demo_jar" --mode=watch --kv-shards=2 --duration=600s \
  --homa.server.bind-address="$subnet.4" "${homa_opts[@]}" > "$out/watch.log" 2>&1 &
pids+=($!)
running[watch]=$!

wait_for "$out/watch.log" "^All 2 shards answer" 180 > /dev/null || fail "the aggregator did not reach both shards"
wait_for "$out/watch.log" "^Aggregated stats" 60 > /dev/null || fail "no key-value figures"
grep -E "^(event|All|Key-value demo|Put|get|scan|Aggregated|Key-value figures)" "$out/watch.log"
sleep 3
grep -E "^watch " "$out/watch.log" | tail -n 2

# Kill kv-1.
kv1_pid=${running[kv-1]}
unset 'running[kv-1]'
kill -9 "$kv1_pid"
kill_ms=$(now_ms)
wait "$kv1_pid" 2> /dev/null || true
echo "Killed kv-1 (SIGKILL, pid $kv1_pid)"
line=$(first_event "$out/watch.log" kv-1 failing "$kill_ms") || fail "calls to kv-1 did not fail after the kill"
fail_ms=$(awk '{ printf "%.0f", $2 * 1000 }' <<< "$line")
detect_ms=$(( fail_ms - kill_ms ))
status=$(awk '{ sub(":", "", $5); print $5 }' <<< "$line")
echo "$line"
line=$(first_event "$out/watch.log" kv-1 resolved "$kill_ms" "resolved none") || fail "the registry did not drop kv-1"
echo "$line"
drop_ms=$(( $(awk '{ printf "%.0f", $2 * 1000 }' <<< "$line") - kill_ms ))
line=$(first_event "$out/watch.log" kv-1 failing "$kill_ms" "no peer for service 'kv-1'") \
  || fail "calls to kv-1 did not fail at once once the registry had dropped it"
echo "$line"
sleep 2

# Restart it.
restart_ms=$(now_ms)
start_shard 1 3 "$out/kv-1-restarted.log"
echo "Restarted kv-1"
line=$(first_event "$out/watch.log" kv-1 resolved "$restart_ms") || fail "the registry did not list the restarted kv-1"
echo "$line"
line=$(first_event "$out/watch.log" kv-1 answering "$restart_ms") || fail "calls did not reach the restarted kv-1"
echo "$line"
answer_ms=$(awk '{ printf "%.0f", $2 * 1000 }' <<< "$line")
ready=$(grep -E -m1 "^Key-value shard kv-1 serving" "$out/kv-1-restarted.log") || fail "the restarted kv-1 printed no start-up line"
echo "$ready"
ready_ms=$(sed -E 's/.*ready at ([0-9]+) \(epoch ms\).*/\1/' <<< "$ready")
rejoin_ms=$(( answer_ms - ready_ms ))
recover_ms=$(( answer_ms - restart_ms ))
sleep 2

# kv-0 while kv-1 was down: the watch's per-second counts between the kill and kv-1's return.
read -r kv0_ok kv0_failed < <(awk -v from="$kill_ms" -v to="$answer_ms" '
  $1 == "watch" && $2 * 1000 >= from + 1000 && $2 * 1000 <= to {
    for (i = 3; i <= NF; i++) if ($i == "kv-0") { ok += $(i + 1); bad += $(i + 3) }
  }
  END { printf "%d %d\n", ok, bad }' "$out/watch.log")
# "failing" events of kv-0 once it had answered (before, the watch may start before it sees the shards).
kv0_failing=$(awk '$1 == "event" && $3 == "kv-0" && $4 == "answering" { up = 1 }
  up && $1 == "event" && $3 == "kv-0" && $4 == "failing" { n++ } END { print n + 0 }' "$out/watch.log")

echo
echo "Multi-host demo, testbed $prefix: registry h1, kv-0 h2, kv-1 h3, aggregator h4; the figures:"
printf "  kv-1 killed: its calls failed after %'d ms with %s (bound %'d ms: liveness budget %'d ms + 1 s)\n" \
  "$detect_ms" "$status" "$detect_bound_ms" "$liveness_budget_ms"
printf "  the registry dropped kv-1 (the aggregator finds no instance; calls fail at once) %'d ms after the kill (bound %'d ms)\n" \
  "$drop_ms" "$registry_drop_bound_ms"
printf "  kv-0 meanwhile: %'d calls answered, %'d failed (\"failing\" events for kv-0 once it answered: %d)\n" \
  "$kv0_ok" "$kv0_failed" "$kv0_failing"
printf "  kv-1 restarted: ready %'d ms after the restart; calls reached it %'d ms after it was ready (bound %'d ms),\n" \
  "$(( ready_ms - restart_ms ))" "$rejoin_ms" "$rejoin_bound_ms"
printf "    %'d ms after the restart (bound %'d ms)\n" "$recover_ms" "$restart_bound_ms"

problems=()
(( detect_ms >= 0 && detect_ms <= detect_bound_ms )) || problems+=("kv-1's calls failed after $detect_ms ms, not within $detect_bound_ms ms")
[[ "$status" =~ ^[A-Z_]+$ ]] || problems+=("kv-1's calls failed without a status: $status")
(( drop_ms <= registry_drop_bound_ms )) || problems+=("the registry dropped kv-1 after $drop_ms ms, not within $registry_drop_bound_ms ms")
(( kv0_ok > 0 )) || problems+=("kv-0 answered no call while kv-1 was down")
(( kv0_failed == 0 && kv0_failing == 0 )) || problems+=("calls to kv-0 failed")
(( rejoin_ms <= rejoin_bound_ms )) || problems+=("calls reached the restarted kv-1 $rejoin_ms ms after it was ready, not within $rejoin_bound_ms ms")
(( recover_ms <= restart_bound_ms )) || problems+=("calls reached the restarted kv-1 $recover_ms ms after the restart, not within $restart_bound_ms ms")
if (( ${#problems[@]} > 0 )); then
  fail "$(IFS=';'; echo "${problems[*]}")"
fi
echo "multi-host demo PASSED (logs in $out)"
