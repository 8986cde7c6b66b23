#!/usr/bin/env bash
# An emulated datacenter rack on one machine (issue 16): H hosts, each a network namespace with one
# veth link to a "switch" (a Linux bridge in a namespace of its own), every link shaped in both
# directions by HTB with 8 strict-priority classes keyed on the IP TOS bits Homa sets
# (priority << 5), each class a byte-limited FIFO: the switch port's buffer.
#
#   benchmarks/testbed.sh up [--hosts=4] [--mtu=1500] [--link-mbps=400] [--port-buffer-bytes=300000]
#   benchmarks/testbed.sh status        # topology, and per-class sent/dropped counters (tc -s)
#   benchmarks/testbed.sh down          # removes every namespace, link and qdisc it made
#   benchmarks/testbed.sh check         # exit 0 if namespaces can be made here, else 1 with the reason
#   HOMA_TESTBED_PREFIX=hb2 HOMA_TESTBED_SUBNET=198.18.2 benchmarks/testbed.sh up   # a second testbed
#
# Addresses: host i is 198.18.0.i/24 in namespace homa-h<i> (RFC 2544's benchmarking range, never
# another network); the switch is namespace homa-sw. Run a command on a host with
#   ip netns exec homa-h1 <command>
# Needs root, iproute2 (ip, tc) and the kernel's veth, bridge, htb, u32 and bfifo. `up` is
# idempotent (it takes down what is there first); `down` leaves nothing behind.
#
# Shaping: on each host's egress and on each switch port's egress, an HTB root class at the link
# rate with 8 leaf classes. Leaf k serves Homa priority k (TOS = k << 5; anything else goes to
# priority 0). Each leaf guarantees a tiny rate (8 kbit/s) and may borrow up to the link rate; HTB
# lends spare bandwidth to the leaf of the highest HTB priority first (HTB prio 0 = Homa priority
# 7), which makes the classes strict priorities. Each leaf's queue is a bfifo holding
# port-buffer-bytes / 8 bytes, so a port buffers at most port-buffer-bytes in all. The switch's
# forwarding runs on CPU 1 (receive packet steering on its ports), where the benchmarks pin their
# servers, not on the load processes' CPU 0 (see steer_switch_port).
set -euo pipefail

# Two testbeds can stand side by side with different HOMA_TESTBED_PREFIX and HOMA_TESTBED_SUBNET
# (for example a demo while a benchmark runs): namespaces, links and the state file carry the prefix.
PREFIX=${HOMA_TESTBED_PREFIX:-homa}
SWITCH_NS=${PREFIX}-sw
BRIDGE=br0
SUBNET=${HOMA_TESTBED_SUBNET:-198.18.0}
HOSTS=4
MTU=1500
LINK_MBPS=400
PORT_BUFFER_BYTES=300000
STATE_FILE=/run/${PREFIX}-testbed.env

usage() {
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
}

die() {
  echo "testbed: $*" >&2
  exit 1
}

parse_options() {
  for arg in "$@"; do
    case "$arg" in
      --hosts=*) HOSTS=${arg#--hosts=} ;;
      --mtu=*) MTU=${arg#--mtu=} ;;
      --link-mbps=*) LINK_MBPS=${arg#--link-mbps=} ;;
      --port-buffer-bytes=*) PORT_BUFFER_BYTES=${arg#--port-buffer-bytes=} ;;
      -h|--help) usage; exit 0 ;;
      *) die "unknown option '$arg' (see: $0 --help)" ;;
    esac
  done
  [[ "$HOSTS" =~ ^[0-9]+$ ]] && (( HOSTS >= 2 && HOSTS <= 8 )) || die "--hosts must be between 2 and 8, was '$HOSTS'"
  [[ "$MTU" =~ ^[0-9]+$ ]] && (( MTU >= 1280 && MTU <= 9000 )) || die "--mtu must be between 1280 and 9000, was '$MTU'"
  [[ "$LINK_MBPS" =~ ^[0-9]+$ ]] && (( LINK_MBPS >= 1 && LINK_MBPS <= 100000 )) \
    || die "--link-mbps must be between 1 and 100000, was '$LINK_MBPS'"
  [[ "$PORT_BUFFER_BYTES" =~ ^[0-9]+$ ]] && (( PORT_BUFFER_BYTES >= 8 * MTU )) \
    || die "--port-buffer-bytes must be at least 8 x mtu ($(( 8 * MTU ))), was '$PORT_BUFFER_BYTES'"
}

# Why namespaces cannot be made here, or nothing.
unavailable_reason() {
  if [[ $(id -u) -ne 0 ]]; then
    echo "needs root (namespaces, veth and tc)"
    return
  fi
  for tool in ip tc; do
    command -v "$tool" > /dev/null || { echo "'$tool' not found (install iproute2)"; return; }
  done
  local probe=${PREFIX}-probe-$$
  if ! ip netns add "$probe" 2> /dev/null; then
    echo "cannot create a network namespace here"
    return
  fi
  if ! ip netns exec "$probe" ip link add probe0 type veth peer name probe1 2> /dev/null; then
    ip netns del "$probe" 2> /dev/null || true
    echo "cannot create veth links here"
    return
  fi
  if ! ip netns exec "$probe" tc qdisc add dev probe0 root handle 1: htb 2> /dev/null; then
    ip netns del "$probe" 2> /dev/null || true
    echo "no HTB qdisc in this kernel"
    return
  fi
  ip netns del "$probe"
}

# shape NS DEV: HTB at the link rate with 8 strict-priority leaves keyed on TOS >> 5, each a bfifo.
shape() {
  local ns=$1 dev=$2
  local rate="${LINK_MBPS}mbit"
  local leaf_bytes=$(( PORT_BUFFER_BYTES / 8 ))
  local quantum=$(( MTU + 14 ))
  local tc=(ip netns exec "$ns" tc)
  # A switch port queues MTU-sized packets: no TCP segmentation offload builds 64 KB packets here
  # (a bfifo smaller than one would drop every one of them, and HTB does not segment).
  ip netns exec "$ns" ip link set dev "$dev" gso_max_size "$MTU" gso_max_segs 1
  "${tc[@]}" qdisc replace dev "$dev" root handle 1: htb default 10 r2q 1
  "${tc[@]}" class add dev "$dev" parent 1: classid 1:1 htb rate "$rate" ceil "$rate" \
    burst "$(( 2 * quantum ))" cburst "$(( 2 * quantum ))" quantum "$quantum"
  local priority
  for priority in 0 1 2 3 4 5 6 7; do
    local class=$(( 10 + priority ))
    # HTB prio 0 is served first: Homa priority 7 (control packets, the shortest messages).
    "${tc[@]}" class add dev "$dev" parent 1:1 classid "1:$class" htb rate 8kbit ceil "$rate" \
      prio $(( 7 - priority )) quantum "$quantum" burst "$quantum" cburst "$quantum"
    "${tc[@]}" qdisc add dev "$dev" parent "1:$class" handle "$class:" bfifo limit "$leaf_bytes"
    # The TOS byte's top three bits are the priority (DSCP class selector CS<priority>).
    "${tc[@]}" filter add dev "$dev" parent 1: protocol ip prio 1 u32 \
      match ip tos $(( priority << 5 )) 0xe0 flowid "1:$class"
  done
}

cmd_down() {
  local ns
  for ns in $(ip netns list 2> /dev/null | awk '{print $1}' | grep -E "^${PREFIX}-(sw|h[0-9]+)$" || true); do
    ip netns del "$ns"
  done
  rm -f "$STATE_FILE"
}

cmd_up() {
  parse_options "$@"
  local reason
  reason=$(unavailable_reason)
  [[ -z "$reason" ]] || die "cannot build the testbed: $reason"
  cmd_down
  ip netns add "$SWITCH_NS"
  ip netns exec "$SWITCH_NS" ip link set lo up
  ip netns exec "$SWITCH_NS" ip link add "$BRIDGE" type bridge
  ip netns exec "$SWITCH_NS" ip link set "$BRIDGE" mtu "$MTU" up
  local i
  for i in $(seq 1 "$HOSTS"); do
    local ns=${PREFIX}-h$i
    ip netns add "$ns"
    ip netns exec "$ns" ip link set lo up
    # One veth pair per host: eth0 in the host, sw<i> in the switch, a port of the bridge.
    ip link add "${PREFIX}-h$i" mtu "$MTU" type veth peer name "${PREFIX}-sw$i" mtu "$MTU"
    ip link set "${PREFIX}-h$i" netns "$ns"
    ip link set "${PREFIX}-sw$i" netns "$SWITCH_NS"
    ip netns exec "$ns" ip link set "${PREFIX}-h$i" name eth0
    ip netns exec "$ns" ip addr add "$SUBNET.$i/24" dev eth0
    ip netns exec "$ns" ip link set eth0 up
    ip netns exec "$SWITCH_NS" ip link set "${PREFIX}-sw$i" name "sw$i"
    ip netns exec "$SWITCH_NS" ip link set "sw$i" master "$BRIDGE"
    ip netns exec "$SWITCH_NS" ip link set "sw$i" up
    shape "$ns" eth0               # the host's NIC towards the switch
    shape "$SWITCH_NS" "sw$i"      # the switch's output port towards the host
    steer_switch_port "$i"
  done
  cat > "$STATE_FILE" << EOF
PREFIX=$PREFIX
SUBNET=$SUBNET
HOSTS=$HOSTS
MTU=$MTU
LINK_MBPS=$LINK_MBPS
PORT_BUFFER_BYTES=$PORT_BUFFER_BYTES
EOF
  # Host 1 reaches every other host: a datagram makes it resolve their MAC addresses through the
  # switch (ARP), which proves the path without ping.
  for i in $(seq 2 "$HOSTS"); do
    reachable "$i" || die "host 1 cannot reach $SUBNET.$i; the testbed is up but broken (run: $0 down)"
  done
  echo "testbed up: $HOSTS hosts ${SUBNET}.1-${SUBNET}.$HOSTS (namespaces ${PREFIX}-h1..${PREFIX}-h$HOSTS)," \
    "switch ${SWITCH_NS}, MTU $MTU, links ${LINK_MBPS} Mbit/s with 8 priority classes," \
    "port buffer $PORT_BUFFER_BYTES B ($(( PORT_BUFFER_BYTES / 8 )) B per class)"
}

# steer_switch_port I: the switch has no CPU of its own: a packet is bridged, queued at its output
# port and delivered on whichever CPU receives it at the switch's input port, by default the
# sender's. The benchmarks pin their load processes to CPU 0 and the servers to CPU 1; left alone,
# CPU 0 would also carry the switch's work for everything the load processes send and become the
# rack's bottleneck before any link. So the switch works on CPU 1 (receive packet steering on
# every switch port); each host's own NIC queue stays on the sender's CPU.
steer_switch_port() {
  local i=$1
  (( $(nproc) >= 2 )) || return 0
  ip netns exec "$SWITCH_NS" sh -c "echo 2 > /sys/class/net/sw$i/queues/rx-0/rps_cpus" 2> /dev/null \
    || echo "testbed: cannot steer switch port sw$i to CPU 1 (RPS): its sender's CPU switches what it sends" >&2
}

# reachable I: whether host 1 resolves host I's MAC address through the switch (within about 2 s).
reachable() {
  local i=$1 attempt
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    ip netns exec "${PREFIX}-h1" bash -c "echo probe > /dev/udp/$SUBNET.$i/9" 2> /dev/null || true
    if ip netns exec "${PREFIX}-h1" ip neigh show "$SUBNET.$i" | grep -q lladdr; then
      return 0
    fi
    sleep 0.2
  done
  return 1
}

cmd_status() {
  if [[ ! -f "$STATE_FILE" ]] || ! ip netns list 2> /dev/null | grep -q "^${SWITCH_NS}\b"; then
    echo "testbed down"
    return 0
  fi
  # shellcheck disable=SC1090
  . "$STATE_FILE"
  echo "testbed up: $HOSTS hosts, MTU $MTU, links $LINK_MBPS Mbit/s, port buffer $PORT_BUFFER_BYTES B"
  local i
  for i in $(seq 1 "$HOSTS"); do
    echo "== host $i ($SUBNET.$i) egress; switch port sw$i egress"
    echo "class host-sent-bytes host-dropped switch-sent-bytes switch-dropped"
    paste <(class_counters "${PREFIX}-h$i" eth0) <(class_counters "$SWITCH_NS" "sw$i" | cut -d' ' -f2-) \
      | tr '\t' ' '
  done
}

# class_counters NS DEV: one line per leaf class: "priority<k> sentBytes dropped".
class_counters() {
  ip netns exec "$1" tc -s class show dev "$2" | awk '
    /^class htb 1:1[0-7] / { split($3, id, ":"); class = id[2] - 10 }
    /Sent/ && class != "" { printf "priority%d %s %s\n", class, $2, $7; class = "" }' \
    | tr -d ',)' | sort
}

main() {
  [[ "$PREFIX" =~ ^[a-z][a-z0-9]{0,7}$ ]] \
    || die "HOMA_TESTBED_PREFIX must be 1-8 lower-case letters or digits, starting with a letter, was '$PREFIX'"
  [[ "$SUBNET" =~ ^198\.1[89]\.[0-9]{1,3}$ ]] && (( ${SUBNET##*.} <= 255 )) \
    || die "HOMA_TESTBED_SUBNET must be three octets inside 198.18.0.0/15 (RFC 2544), e.g. 198.18.1, was '$SUBNET'"
  local command=${1:-}
  shift || true
  case "$command" in
    up) cmd_up "$@" ;;
    down) cmd_down ;;
    status) cmd_status ;;
    check)
      local reason
      reason=$(unavailable_reason)
      if [[ -n "$reason" ]]; then
        echo "testbed unavailable: $reason"
        exit 1
      fi
      echo "testbed available"
      ;;
    -h|--help|help) usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"
