#!/usr/bin/env python3
"""Issue 14's adversarial runs against the demo's echo server (``--mode=server``), on loopback only.

For each chosen attack this script starts a fresh demo server, the demo's own W3 workload client
(``--mode=client``) and a small Python Homa client beside it (the "legitimate clients"), runs the
attack for a few seconds, and reports: packets and bytes the attacker sent, bytes the server sent
back to the forged addresses (caught on a UDP socket bound to the forged port on every loopback
address), the legitimate clients' completed and failed calls during the attack (by status), the
server's heap (live after a full GC before and after the attack, peak used from jstat) and the
server's engine counters (printed by the demo when it stops).

Standard library only. Needs root (CAP_NET_RAW) for the raw socket that forges source addresses.
Every forged source is in 127.0.0.0/8 and every packet goes to 127.0.0.1: nothing leaves the host.

Usage: homa_attacks.py --jar demo-services/target/demo-services.jar [--port 4300] [ATTACK ...|all]
Exit code: 0 when every selected attack ran (whatever its outcome), 1 on a harness error, 2 for
bad arguments.
"""

import argparse
import os
import random
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

# ----------------------------------------------------------------------------------- wire format
# Offsets as in protocol-engine/src/main/java/io/homa/engine/wire/*.java (big-endian).

DATA, GRANT, RESEND, RPC_UNKNOWN, BUSY, CUTOFFS, NEED_ACK, ACK = 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x17, 0x18
TYPE_NAMES = {DATA: "DATA", GRANT: "GRANT", RESEND: "RESEND", RPC_UNKNOWN: "RPC_UNKNOWN", BUSY: "BUSY",
              CUTOFFS: "CUTOFFS", NEED_ACK: "NEED_ACK", ACK: "ACK"}
COMMON_LEN = 28
DATA_HEADER_LEN = 56
# Bytes a client may send before the server's GRANT: the engine's default unscheduled-bytes (60,000)
# rounded up to whole DATA packets; 60,000 is below that for any MTU, so always allowed.
UNSCHEDULED = 60_000
CHUNK = 16_000  # payload bytes per DATA packet we send (the receiver accepts any size up to its MTU)
LOOPBACK = "127.0.0.1"


def common(sport, dport, ptype, rpcid, seg_offset=0, doff=0):
    # sport@0 dport@2 offset@4 reserved@8(3) type@11 doff@12 reserved@13 reserved@14(2)
    # checksum@16 urgent@18 rpcid@20
    return struct.pack(">HHI3sBBBHHHQ", sport, dport, seg_offset, b"\0\0\0", ptype, doff, 0, 0, 0, 0, rpcid)


def data_packet(sport, dport, rpcid, msg_len, offset, payload, incoming=None, ack_rpcid=0, ack_port=0,
                cutoff_version=0, retrans=0, flags=0):
    if incoming is None:
        incoming = min(msg_len, UNSCHEDULED)
    # length@28 incoming@32 ack rpcid@36 ack port@44 cutoff version@46 retrans@48 flags@49
    # reserved@50(2) offset@52 payload@56
    return (common(sport, dport, DATA, rpcid, offset, (DATA_HEADER_LEN // 4) << 4)
            + struct.pack(">IIQHHBBHI", msg_len, incoming, ack_rpcid, ack_port, cutoff_version, retrans, flags,
                          0, offset)
            + payload)


def grant_packet(sport, dport, rpcid, offset, priority=0, resend_all=0):
    return common(sport, dport, GRANT, rpcid) + struct.pack(">IBB", offset, priority, resend_all)


def resend_packet(sport, dport, rpcid, offset, length, priority=7):
    return common(sport, dport, RESEND, rpcid) + struct.pack(">IIB", offset, length, priority)


def cutoffs_packet(sport, dport, rpcid, cutoffs, version):
    return common(sport, dport, CUTOFFS, rpcid) + struct.pack(">8IH", *cutoffs, version)


def ack_packet(sport, dport, rpcid, acks):
    """ACK: num acks@28 (2), then {rpcid (8), server port (2)} per listed ack."""
    body = struct.pack(">H", len(acks)) + b"".join(struct.pack(">QH", r, p) for r, p in acks)
    return common(sport, dport, ACK, rpcid) + body


EPOCH_ASK = 0xFFFFFF


def epoch_and_token(packet):
    """(server epoch @8, 3 bytes; address token @14, 6 bytes) of a Homa packet (issue 14)."""
    if len(packet) < COMMON_LEN:
        return 0, 0
    return int.from_bytes(packet[8:11], "big"), int.from_bytes(packet[14:20], "big")


def with_epoch_and_token(packet, epoch, token):
    return packet[:8] + epoch.to_bytes(3, "big") + packet[11:14] + token.to_bytes(6, "big") + packet[20:]


def parse(packet):
    """(type, rpcid with S bit, fields dict) of a Homa packet, or None."""
    if len(packet) < COMMON_LEN:
        return None
    ptype = packet[11]
    rpcid = struct.unpack_from(">Q", packet, 20)[0]
    f = {}
    if ptype == DATA and len(packet) >= DATA_HEADER_LEN:
        f["length"], f["incoming"] = struct.unpack_from(">II", packet, 28)
        f["cutoff_version"] = struct.unpack_from(">H", packet, 46)[0]
        f["offset"] = struct.unpack_from(">I", packet, 52)[0]
        f["payload"] = packet[DATA_HEADER_LEN:]
    elif ptype == GRANT and len(packet) >= 34:
        f["offset"], f["priority"] = struct.unpack_from(">IB", packet, 28)
    elif ptype == RESEND and len(packet) >= 37:
        f["offset"], f["length"] = struct.unpack_from(">II", packet, 28)
    elif ptype == CUTOFFS and len(packet) >= 62:
        f["cutoffs"] = struct.unpack_from(">8I", packet, 28)
        f["version"] = struct.unpack_from(">H", packet, 60)[0]
    return ptype, rpcid, f


# ------------------------------------------------------------------------------- raw forging

def check_loopback(address):
    if not address.startswith("127."):
        raise ValueError("refusing to forge or send to a non-loopback address: " + address)


class Forger:
    """Sends UDP datagrams with any 127.0.0.0/8 source through a raw socket (IP_HDRINCL)."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
        self.packets = 0
        self.bytes = 0  # UDP payload bytes (the Homa packets)
        self.ident = random.randrange(65536)

    def send(self, src, dst, payload, tos=0):
        check_loopback(src[0])
        check_loopback(dst[0])
        udp_len = 8 + len(payload)
        self.ident = (self.ident + 1) & 0xFFFF
        # The kernel fills the IP checksum; UDP checksum 0 = none (allowed for IPv4).
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, tos, 20 + udp_len, self.ident, 0x4000, 64, socket.IPPROTO_UDP, 0,
                         socket.inet_aton(src[0]), socket.inet_aton(dst[0]))
        udp = struct.pack(">HHHH", src[1], dst[1], udp_len, 0)
        while True:
            try:
                self.sock.sendto(ip + udp + payload, (dst[0], 0))
                break
            except (BlockingIOError, InterruptedError):
                time.sleep(0.0005)
            except OSError as e:  # ENOBUFS under a flood: back off and retry
                if e.errno in (105, 11):
                    time.sleep(0.001)
                else:
                    raise
        self.packets += 1
        self.bytes += len(payload)

    def close(self):
        self.sock.close()


class Catcher:
    """A UDP socket on 0.0.0.0:port: receives what the server sends to that port at any loopback
    address, i.e. to every forged source that uses the port. Counts packets and bytes per type."""

    def __init__(self, port=0):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE (root)
        except OSError:
            pass
        self.sock.bind(("0.0.0.0", port))
        self.port = self.sock.getsockname()[1]
        self.sock.settimeout(0.1)
        self.packets = 0
        self.bytes = 0
        self.by_type = {}
        self.addresses = set()
        self._stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self._stop:
            try:
                packet, _ = self.sock.recvfrom(70000)
            except socket.timeout:
                continue
            except OSError:
                return
            self.packets += 1
            self.bytes += len(packet)
            p = parse(packet)
            name = TYPE_NAMES.get(p[0], "?") if p else "short"
            self.by_type[name] = self.by_type.get(name, 0) + len(packet)

    def close(self):
        self._stop = True
        self.thread.join(1)
        self.sock.close()

    def summary(self):
        return "%d pkts / %s B (%s)" % (self.packets, fmt(self.bytes),
                                        ", ".join("%s %s" % (k, fmt(v)) for k, v in sorted(self.by_type.items())) or "-")


# ------------------------------------------------------------------------- a small Homa client

class HomaClient:
    """A minimal Homa client on one UDP socket: one RPC at a time; sends a request (unscheduled
    bytes, then under GRANTs, answering RESENDs), grants the whole response at once, verifies the
    echo and ACKs it. Outcomes: OK, MISMATCH, RPC_UNKNOWN, TIMEOUT."""

    def __init__(self, server, bind=(LOOPBACK, 0)):
        self.server = server
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)
        except OSError:
            pass
        self.sock.bind(bind)
        self.address = self.sock.getsockname()
        self.port = self.address[1]
        # Clock-derived even rpcids, as the engine's clients use (start-us << 8).
        self.next_rpcid = (int(time.time() * 1e6) << 8) & ((1 << 63) - 1) & ~1
        self.cutoff_version = 0
        self.rx_bytes = 0
        # The server's epoch and address token (issue 14), learned from its packets about our RPCs and
        # written into ours as the engine's clients do: the echo validates our address, so the
        # server does not hold its responses to 3x what we sent. Epoch 0 (none) is the draft's
        # behaviour: the server runs our first request without first contact.
        self.epoch = 0
        self.token = 0

    def close(self):
        self.sock.close()

    def _send(self, packet):
        self.sock.sendto(with_epoch_and_token(packet, self.epoch, self.token), self.server)

    def _learn(self, packet):
        epoch, token = epoch_and_token(packet)
        if epoch and epoch != EPOCH_ASK:
            self.epoch = epoch
        if token:
            self.token = token

    def _send_request_range(self, rpcid, payload, start, end, retrans=0):
        length = len(payload)
        off = start
        while off < end:
            n = min(CHUNK, end - off)
            self._send(data_packet(self.port, self.server[1], rpcid, length, off, payload[off:off + n],
                                   cutoff_version=self.cutoff_version, retrans=retrans))
            off += n

    def _recv(self, timeout):
        r, _, _ = select.select([self.sock], [], [], max(0.0, timeout))
        if not r:
            return None
        packet, src = self.sock.recvfrom(70000)
        self.rx_bytes += len(packet)
        return packet

    def call(self, payload, timeout=3.0, ack=True):
        """Returns (status, rpcid)."""
        rpcid = self.next_rpcid
        self.next_rpcid += 2
        length = len(payload)
        granted = min(length, UNSCHEDULED)
        sent = granted
        self._send_request_range(rpcid, payload, 0, granted)
        response = None
        resp_len = 0
        ranges = []  # received [start, end) of the response, merged
        received = 0
        start = time.monotonic()
        last_heard = start
        last_resend = start
        resend_interval = 0.02
        while True:
            now = time.monotonic()
            if now - start > timeout:
                return "TIMEOUT", rpcid
            packet = self._recv(min(0.01, timeout - (now - start)))
            now = time.monotonic()
            if packet is None:
                if now - last_heard > resend_interval and now - last_resend > resend_interval:
                    last_resend = now
                    if response is None:
                        self._send(resend_packet(self.port, self.server[1], rpcid, 0, UNSCHEDULED))
                    else:
                        gap = first_gap(ranges, resp_len)
                        if gap:
                            self._send(resend_packet(self.port, self.server[1], rpcid, gap[0], gap[1] - gap[0]))
                continue
            p = parse(packet)
            if p is None:
                continue
            ptype, wire_id, f = p
            if wire_id & ~1 == rpcid:
                self._learn(packet)
            if wire_id & ~1 != rpcid:
                if ptype == NEED_ACK:  # a response we already finished
                    self._send(ack_packet(self.port, self.server[1], wire_id & ~1, []))
                elif ptype == CUTOFFS and "version" in f:
                    self.cutoff_version = f["version"]
                continue
            last_heard = now
            if ptype == GRANT and "offset" in f:
                new = min(length, f["offset"])
                if new > sent:
                    self._send_request_range(rpcid, payload, sent, new)
                    sent = new
                granted = max(granted, new)
            elif ptype == RESEND and "offset" in f:
                lo = f["offset"]
                hi = min(sent, lo + f["length"])
                if hi > lo:
                    self._send_request_range(rpcid, payload, lo, hi, retrans=1)
                else:
                    self._send(common(self.port, self.server[1], BUSY, rpcid))
            elif ptype == CUTOFFS and "version" in f:
                self.cutoff_version = f["version"]
            elif ptype == RPC_UNKNOWN:
                return "RPC_UNKNOWN", rpcid
            elif ptype == DATA and "length" in f:
                if response is None:
                    resp_len = f["length"]
                    response = bytearray(resp_len)
                    if resp_len > f["incoming"]:
                        self._send(grant_packet(self.port, self.server[1], rpcid, resp_len, 0))
                off, data = f["offset"], f["payload"]
                if off + len(data) > resp_len:
                    continue
                response[off:off + len(data)] = data
                received = add_range(ranges, off, off + len(data))
                if received >= resp_len:
                    if ack:
                        self._send(ack_packet(self.port, self.server[1], rpcid, []))
                    return ("OK" if bytes(response) == payload else "MISMATCH"), rpcid


def add_range(ranges, start, end):
    """Adds [start, end) to a sorted list of disjoint ranges; returns the bytes covered."""
    ranges.append([start, end])
    ranges.sort()
    merged = []
    for s, e in ranges:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    ranges[:] = merged
    return sum(e - s for s, e in merged)


def first_gap(ranges, length):
    pos = 0
    for s, e in ranges:
        if s > pos:
            return pos, s
        pos = max(pos, e)
    return (pos, length) if pos < length else None


class LegitLoad:
    """The Python legitimate client: sequential echo RPCs of 100 B, 20 KB and 200 KB, in turn;
    every outcome recorded with its time."""

    SIZES = (100, 20_000, 200_000)

    def __init__(self, server):
        self.client = HomaClient(server)
        self.results = []  # (end time, status, size)
        self._stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()

    def _run(self):
        i = 0
        rnd = random.Random(14)
        while not self._stop:
            size = self.SIZES[i % len(self.SIZES)]
            i += 1
            payload = rnd.randbytes(size)
            try:
                status, _ = self.client.call(payload, timeout=3.0)
            except OSError as e:
                status = "ERROR " + e.__class__.__name__
            self.results.append((time.monotonic(), status, size))

    def stop(self):
        self._stop = True
        self.thread.join(5)
        self.client.close()

    def window(self, start, end):
        counts = {}
        for t, status, size in self.results:
            if start <= t < end:
                key = status if status == "OK" else "%s(%s)" % (status, fmt(size))
                counts[key] = counts.get(key, 0) + 1
        return counts


# --------------------------------------------------------------------------------- processes

def fmt(n):
    n = float(n)
    for unit in ("", "K", "M", "G"):
        if abs(n) < 1000:
            return ("%.0f%s" % (n, unit)) if unit == "" else ("%.1f%s" % (n, unit))
        n /= 1000
    return "%.1fT" % n


class Proc:
    """A child process whose output lines are kept with the time they were read."""

    all = []

    def __init__(self, args, name):
        self.name = name
        self.lines = []
        self.popen = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      bufsize=1, start_new_session=True)
        Proc.all.append(self)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.popen.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def wait_for(self, pattern, timeout):
        regex = re.compile(pattern)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for _, line in list(self.lines):
                m = regex.search(line)
                if m:
                    return m
            if self.popen.poll() is not None:
                time.sleep(0.2)
                break
            time.sleep(0.05)
        tail = "\n".join(l for _, l in self.lines[-30:])
        raise RuntimeError("%s: no line matching %r within %d s (exit %s); last output:\n%s"
                           % (self.name, pattern, timeout, self.popen.poll(), tail))

    def text(self):
        return "\n".join(l for _, l in self.lines)

    def stop(self, grace=10.0):
        if self.popen.poll() is None:
            try:
                os.kill(self.popen.pid, signal.SIGTERM)
                self.popen.wait(grace)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                pass
        if self.popen.poll() is None:
            try:
                os.kill(self.popen.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.popen.wait(5)
        self.thread.join(2)

    @classmethod
    def stop_all(cls):
        for p in list(cls.all):
            try:
                p.stop(grace=3.0)
            except Exception:  # noqa: BLE001 - best effort at exit
                pass


def heap_live_kb(pid):
    """Heap used (KB) right after a full GC: the live heap."""
    with tempfile.NamedTemporaryFile("w", suffix=".jcmd", delete=False) as f:
        f.write("GC.run\nGC.heap_info\n")
        name = f.name
    try:
        out = subprocess.run(["jcmd", str(pid), "-f", name], capture_output=True, text=True, timeout=30).stdout
    finally:
        os.unlink(name)
    m = re.search(r"heap\s+total \d+K, used (\d+)K", out)
    return int(m.group(1)) if m else None


class HeapSampler:
    """`jstat -gc PID 500`: heap used (survivors + eden + old), sampled every 500 ms."""

    def __init__(self, pid):
        self.samples = []  # (time, used KB)
        self.popen = subprocess.Popen(["jstat", "-gc", str(pid), "500"], stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        header = None
        for line in self.popen.stdout:
            cols = line.split()
            if not cols:
                continue
            if cols[0] == "S0C":
                header = cols
                continue
            if header and len(cols) == len(header):
                try:
                    v = dict(zip(header, (float(c) for c in cols)))
                    self.samples.append((time.monotonic(), v["S0U"] + v["S1U"] + v["EU"] + v["OU"]))
                except ValueError:
                    pass

    def peak(self, start, end):
        values = [u for t, u in self.samples if start <= t <= end]
        return max(values) if values else None

    def stop(self):
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait(5)


PROGRESS = re.compile(r"^\s*([\d.]+) s\s+([\d,]+) RPCs\s+([\d,]+) RPCs/s\s+([\d,]+) failures")


def demo_client_window(proc, start, end):
    """From the demo client's one-per-second progress lines (cumulative RPCs and failures, read at
    known times): RPCs completed and failed in [start, end] and the lowest per-second rate there."""
    points = []
    for t, line in proc.lines:
        m = PROGRESS.match(line)
        if m:
            points.append((t, int(m.group(2).replace(",", "")), int(m.group(3).replace(",", "")),
                           int(m.group(4).replace(",", ""))))
    before = [p for p in points if p[0] <= start]
    inside = [p for p in points if start < p[0] <= end + 0.6]
    if not inside:
        return None
    base = before[-1] if before else (start, 0, 0, 0)
    last = inside[-1]
    return {"ok": last[1] - base[1], "failed": last[3] - base[3], "min_rate": min(p[2] for p in inside),
            "rate_before": before[-1][2] if before else None}


# ------------------------------------------------------------------------------------ attacks

class Context:
    def __init__(self, server, forger, demo_client_port, legit, server_pid):
        self.server = server  # (ip, port)
        self.forger = forger
        self.demo_client_port = demo_client_port
        self.legit = legit
        self.server_pid = server_pid
        self.notes = []
        self.catchers = []

    def catcher(self):
        c = Catcher()
        self.catchers.append(c)
        return c


def forged_ack_floor(ctx):
    """One ACK from each legitimate client's own address (the demo client's and the Python
    client's, forged through the raw socket) listing 4,097 rpcids >= 2^62; a second later the same
    4,097 rpcids in ACKs of at most 64 (the engine's cap on rpcids per ACK)."""
    base = 1 << 62
    ids = [base + 2 * (i + 1) for i in range(4097)]
    victims = [(LOOPBACK, ctx.demo_client_port), (LOOPBACK, ctx.legit.client.port)]
    for v in victims:
        ctx.forger.send(v, ctx.server, ack_packet(v[1], ctx.server[1], base, [(r, ctx.server[1]) for r in ids]))
    ctx.notes.append("phase 1: one %s B ACK listing 4,097 rpcids per victim" % fmt(AckHeaderLen(4097)))
    time.sleep(1.5)
    for v in victims:
        for i in range(0, len(ids), 64):
            ctx.forger.send(v, ctx.server,
                            ack_packet(v[1], ctx.server[1], base, [(r, ctx.server[1]) for r in ids[i:i + 64]]))
    ctx.notes.append("phase 2 (t+1.5 s): the same rpcids in 65 ACKs of <= 64 per victim")
    time.sleep(2.5)


def AckHeaderLen(n):  # noqa: N802 - mirrors AckHeader.packetLength
    return 30 + 10 * n


def ack_set_flood(ctx, peers=1000):
    """1,000 forged peers (127.0.{1..4}.x, one port we listen on): each first makes itself known
    with a 1-byte echo request (rpcid R), then sends one ACK of R listing 4,096 rpcids below R
    (41 KB, the original attack), then the same rpcids in 64 ACKs of 64 (within the engine's cap):
    finished-set memory per peer is what this measures."""
    c = ctx.catcher()
    srv = ctx.server
    addresses = ["127.0.%d.%d" % (1 + i // 250, 1 + i % 250) for i in range(peers)]
    rid = (1 << 40)
    listed = [rid - 2 * (k + 1) for k in range(4096)]
    for i, a in enumerate(addresses):
        ctx.forger.send((a, c.port), srv, data_packet(c.port, srv[1], rid, 1, 0, b"x"))
        if i % 50 == 49:
            time.sleep(0.005)
    time.sleep(0.5)
    big = None
    for i, a in enumerate(addresses):
        if big is None:
            big = ack_packet(c.port, srv[1], rid, [(r, srv[1]) for r in listed])
        ctx.forger.send((a, c.port), srv, big)
        if i % 10 == 9:
            time.sleep(0.004)
    ctx.notes.append("phase 1: %d peers x one ACK of 4,096 rpcids (%s B each)" % (peers, fmt(len(big))))
    time.sleep(0.5)
    small = [ack_packet(c.port, srv[1], rid, [(r, srv[1]) for r in listed[j:j + 64]]) for j in range(0, 4096, 64)]
    for i, a in enumerate(addresses):
        for pkt in small:
            ctx.forger.send((a, c.port), srv, pkt)
        time.sleep(0.003)
    ctx.notes.append("phase 2: %d peers x 64 ACKs of 64 rpcids" % peers)
    time.sleep(1.0)


def phantom_flood(ctx, seconds=2.5):
    """8 empty first DATA packets (no payload) declaring 1 MiB requests from one forged address,
    sent again every 50 ms for 2.5 s (the issue's attack); then 2.5 s of the same with one byte of
    payload each (the smallest first packet an engine that drops empty DATA still takes). The
    Python client's 200 KB requests need grants meanwhile."""
    c = ctx.catcher()
    src = ("127.0.3.1", c.port)
    for phase, payload in ((1, b""), (2, b"\x01")):
        base = (1 << 41) + phase * 1000
        pkts = [data_packet(c.port, ctx.server[1], base + 2 * k, 1 << 20, 0, payload, incoming=UNSCHEDULED)
                for k in range(8)]
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for p in pkts:
                ctx.forger.send(src, ctx.server, p)
            time.sleep(0.05)
        ctx.notes.append("phase %d: 8 first DATA with %d payload bytes every 50 ms for %.1f s"
                         % (phase, len(payload), seconds))


def one_byte_flood(ctx, count=18_000):
    """18,000 one-byte first DATA packets (each a new rpcid declaring a 1 MiB request) from one
    forged address and port, in about 1.5 s; then 3.5 s to watch the effect."""
    c = ctx.catcher()
    src = ("127.0.4.1", c.port)
    base = (1 << 42)
    start = time.monotonic()
    for k in range(count):
        ctx.forger.send(src, ctx.server, data_packet(c.port, ctx.server[1], base + 2 * k, 1 << 20, 0, b"\x01",
                                                    incoming=UNSCHEDULED))
        if k % 200 == 199:
            time.sleep(0.015)
    ctx.notes.append("sent in %.1f s" % (time.monotonic() - start))
    time.sleep(max(0.0, 5.0 - (time.monotonic() - start)))


def zero_payload_flood(ctx, count=100_000):
    """100,000 zero-payload first DATA packets (half-open RPCs, each a new rpcid declaring a
    100,000-byte request) from 10 forged addresses, in about 4 s."""
    c = ctx.catcher()
    srv = ctx.server
    sources = [("127.0.5.%d" % (i + 1), c.port) for i in range(10)]
    base = (1 << 43)
    start = time.monotonic()
    for k in range(count):
        ctx.forger.send(sources[k % 10], srv, data_packet(c.port, srv[1], base + 2 * k, 100_000, 0, b"",
                                                         incoming=UNSCHEDULED))
        if k % 500 == 499:
            time.sleep(0.02)
    ctx.notes.append("sent in %.1f s" % (time.monotonic() - start))
    time.sleep(max(0.0, 5.0 - (time.monotonic() - start)))


def forged_resend(ctx, seconds=3.0):
    """A Python client (its own socket, 127.0.0.1:P) gets a 1 MB echo response in full and never
    ACKs it, so the server stores it. Then RESEND(offset 0, length 1 MB) from that client's
    address every 2 ms for 3 s (sent from the client's own socket: on the wire identical to a
    forgery of it); everything arriving at that address is counted."""
    victim = HomaClient(ctx.server)
    try:
        payload = random.Random(6).randbytes(1_000_000)
        status, rpcid = victim.call(payload, timeout=5.0, ack=False)
        ctx.notes.append("victim %s:%d, 1 MB echo: %s (not ACKed)" % (LOOPBACK, victim.port, status))
        if status != "OK":
            return
        victim.rx_bytes = 0
        by_type = {}
        payload_back = 0  # response bytes in the DATA packets, headers not counted: what the budget counts
        sent = 0
        sent_bytes = 0
        pkt = resend_packet(victim.port, ctx.server[1], rpcid, 0, 1_000_000)
        start = time.monotonic()
        next_send = start
        first_unknown = None
        while True:
            now = time.monotonic()
            if now >= start + seconds + 0.5:
                break
            if now >= next_send and now < start + seconds:
                victim.sock.sendto(pkt, ctx.server)
                sent += 1
                sent_bytes += len(pkt)
                next_send += 0.002
            packet = victim._recv(0.001)
            while packet is not None:
                p = parse(packet)
                name = TYPE_NAMES.get(p[0], "?") if p else "short"
                by_type[name] = by_type.get(name, 0) + len(packet)
                if p and p[0] == RPC_UNKNOWN and first_unknown is None:
                    first_unknown = time.monotonic() - start
                if p and p[0] == DATA and "payload" in p[2]:
                    payload_back += len(p[2]["payload"])
                packet = victim._recv(0)
        back = victim.rx_bytes
        ctx.forger.packets += sent
        ctx.forger.bytes += sent_bytes
        ctx.result_back = "%s B to the victim (%s); %.0fx the RESEND bytes%s" % (
            fmt(back), ", ".join("%s %s" % (k, fmt(v)) for k, v in sorted(by_type.items())),
            back / max(1, sent_bytes),
            "; RPC_UNKNOWN after %.2f s" % first_unknown if first_unknown is not None else "")
        ctx.notes.append("%d RESENDs; server sent the victim %s B in all, %s B of them response bytes = %.2f responses"
                         " (budget: 8 x 1,000,000 B; the rest are DATA headers and control packets); vs. all bytes"
                         " the victim ever sent it (1 MB request + RESENDs): %.1fx"
                         % (sent, fmt(back), fmt(payload_back), payload_back / 1e6, back / (1_000_000 + sent_bytes)))
    finally:
        victim.close()


def unvalidated_resend(ctx, seconds=3.0):
    """Amplification toward an address that never talked to the server (issue 14, item 3): the
    forger writes a victim's address (127.0.0.77, a port only a catcher listens on) as the source
    of a 60,000-byte echo request (all unscheduled: an off-path forger sees no GRANT), so the
    server stores a 60 KB response for it; then RESEND(0, 60,000) from the same forged address
    every 2 ms for 3 s. The victim never echoes the server's address token, so the server may send
    it at most 3x what came from its address; everything arriving at the victim's port is counted."""
    catcher = ctx.catcher()
    victim = ("127.0.0.77", catcher.port)
    rpcid = ((int(time.time() * 1e6) << 11) + 4242) & ((1 << 63) - 2)
    payload = random.Random(77).randbytes(UNSCHEDULED)
    in_bytes = 0
    for off in range(0, UNSCHEDULED, CHUNK):
        packet = data_packet(victim[1], ctx.server[1], rpcid, UNSCHEDULED, off, payload[off:off + CHUNK])
        ctx.forger.send(victim, ctx.server, packet)
        in_bytes += len(packet)
    time.sleep(0.3)  # the server echoes what it can
    pkt = resend_packet(victim[1], ctx.server[1], rpcid, 0, UNSCHEDULED)
    sent = 0
    start = time.monotonic()
    next_send = start
    while time.monotonic() < start + seconds:
        now = time.monotonic()
        if now >= next_send:
            ctx.forger.send(victim, ctx.server, pkt)
            in_bytes += len(pkt)
            sent += 1
            next_send += 0.002
        else:
            time.sleep(min(0.002, next_send - now))
    time.sleep(0.5)
    out = catcher.bytes
    ctx.result_back = "%s B to the victim (%s) for %s B from its address: %.2fx" % (
        fmt(out), ", ".join("%s %s" % (k, fmt(v)) for k, v in sorted(catcher.by_type.items())), fmt(in_bytes),
        out / max(1, in_bytes))
    ctx.notes.append("forged request of 60,000 B + %d RESENDs from %s:%d; the server sent it %s B = %.2fx what "
                     "came from that address (limit 3x; the retransmission budget alone would allow 8 x 64 KiB)"
                     % (sent, victim[0], victim[1], fmt(out), out / max(1, in_bytes)))


def sniff_client_data(ctx, seconds):
    """Client->server DATA packets of the demo client seen on lo (AF_PACKET): priority histogram
    (IP TOS >> 5), their rpcids (newest last) and cutoff versions."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
    s.bind(("lo", 0x0800))
    s.settimeout(0.05)
    hist, rpcids, versions = {}, [], {}
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            try:
                pkt, addr = s.recvfrom(70000)
            except socket.timeout:
                continue
            if addr[2] == 4 or len(pkt) < 28 + DATA_HEADER_LEN or pkt[9] != 17:  # 4 = PACKET_OUTGOING
                continue
            ihl = (pkt[0] & 0x0F) * 4
            sport, dport = struct.unpack_from(">HH", pkt, ihl)
            if sport != ctx.demo_client_port or dport != ctx.server[1]:
                continue
            homa = pkt[ihl + 8:]
            if len(homa) < DATA_HEADER_LEN or homa[11] != DATA:
                continue
            prio = pkt[1] >> 5
            hist[prio] = hist.get(prio, 0) + 1
            rid = struct.unpack_from(">Q", homa, 20)[0]
            if rid not in rpcids[-32:]:
                rpcids.append(rid)
            v = struct.unpack_from(">H", homa, 46)[0]
            versions[v] = versions.get(v, 0) + 1
    finally:
        s.close()
    return hist, rpcids, versions


def forged_cutoffs(ctx):
    """CUTOFFS with all-zero cutoffs to the demo client, forged from its server (127.0.0.1:port).
    The rpcid must name an RPC the client holds (the engine checks it), so the attacker is given
    the best case: it sniffs the client's newest rpcids on lo (on-path) and sends one packet for
    each of the 16 newest. The client's DATA priorities (IP TOS) are compared over 1 s before and
    after."""
    hist_before, rpcids, versions = sniff_client_data(ctx, 1.0)
    version = 0xA5A5  # distinctive: if the client took the forged CUTOFFS, its DATA names this version
    targets = rpcids[-16:]
    for rid in targets:
        ctx.forger.send(ctx.server, (LOOPBACK, ctx.demo_client_port),
                        cutoffs_packet(ctx.server[1], ctx.demo_client_port, (rid & ~1) | 1, [0] * 8, version))
    hist_after, _, versions_after = sniff_client_data(ctx, 1.5)
    ctx.result_back = "client DATA priority before %s; after %s" % (histo(hist_before), histo(hist_after))
    ctx.notes.append("%d forged CUTOFFS (all zero, version %d) naming the client's newest rpcids; client DATA"
                     " naming that version afterwards: %d of %d (cutoff versions seen: %s before, %s after)"
                     % (len(targets), version, versions_after.get(version, 0), sum(versions_after.values()),
                        span(versions), span(versions_after)))


def span(versions):
    return "%d..%d" % (min(versions), max(versions)) if versions else "none"


def histo(h):
    total = sum(h.values())
    if not total:
        return "(no DATA seen)"
    return " ".join("p%d:%d%%" % (k, round(100 * v / total)) for k, v in sorted(h.items()))


def overlapping_data(ctx, trials=8, controls=2):
    """A 2,000-byte request sent as two overlapping DATA segments, [0, 1200) of 'A' and then
    [800, 2000) of 'B' (they disagree on [800, 1200)), 8 times from a Python client socket;
    the echo (if any) shows which bytes the server took. Then 2 controls whose overlapping bytes
    agree (all 'A'), which must be echoed (so "no response" above is the server's refusal)."""
    client = HomaClient(ctx.server)
    outcome = {}
    try:
        for t in range(trials + controls):
            control = t >= trials
            rpcid = client.next_rpcid
            client.next_rpcid += 2
            a = b"A" * 1200
            b = b"A" * 1200 if control else b"B" * 1200
            srv = ctx.server
            for off, seg in ((0, a), (800, b)):
                client._send(data_packet(client.port, srv[1], rpcid, 2000, off, seg))
                ctx.forger.packets += 1
                ctx.forger.bytes += DATA_HEADER_LEN + len(seg)
            resp = bytearray(2000)
            got = []
            result = "no response in 0.3 s"
            end = time.monotonic() + 0.3
            while time.monotonic() < end:
                packet = client._recv(0.05)
                if packet is None:
                    continue
                p = parse(packet)
                if not p or p[1] & ~1 != rpcid:
                    continue
                if p[0] == DATA and "length" in p[2]:
                    f = p[2]
                    resp[f["offset"]:f["offset"] + len(f["payload"])] = f["payload"]
                    if add_range(got, f["offset"], f["offset"] + len(f["payload"])) >= 2000:
                        mid = bytes(resp[800:1200])
                        result = ("echoed, first writer wins" if mid == b"A" * 400 else
                                  "echoed, last writer wins" if mid == b"B" * 400 else "echoed, mixed bytes")
                        client._send(ack_packet(client.port, srv[1], rpcid, []))
                        break
                elif p[0] == RESEND:
                    result = "refused (server asked for the request again)"
                elif p[0] == RPC_UNKNOWN:
                    result = "refused (RPC_UNKNOWN)"
            if control:
                result = "control (agreeing overlap): " + ("echoed" if result.startswith("echoed") else result)
            outcome[result] = outcome.get(result, 0) + 1
            if not result.startswith("echoed") and not control:
                # Let the server's RESEND state go: tell it we no longer know the RPC.
                client._send(common(client.port, srv[1], RPC_UNKNOWN, rpcid))
    finally:
        client.close()
    ctx.result_back = "; ".join("%d x %s" % (v, k) for k, v in sorted(outcome.items()))


ATTACKS = {
    "forged-ack-floor": (forged_ack_floor, 4.5),
    "ack-set-flood": (ack_set_flood, 8.0),
    "phantom-flood": (phantom_flood, 5.0),
    "one-byte-flood": (one_byte_flood, 5.0),
    "zero-payload-flood": (zero_payload_flood, 6.0),
    "forged-resend": (forged_resend, 5.0),
    "unvalidated-resend": (unvalidated_resend, 4.0),
    "forged-cutoffs": (forged_cutoffs, 3.0),
    "overlapping-data": (overlapping_data, 4.0),
}

WHAT_IT_CHECKS = {
    "forged-ack-floor": "no RPC of the forged client fails (RPC_UNKNOWN) afterwards",
    "ack-set-flood": "live heap growth < 64 MB; server answers throughout",
    "phantom-flood": "no legit failure (200 KB requests get grants)",
    "one-byte-flood": "no legit failure",
    "zero-payload-flood": "no legit failure",
    "forged-resend": "server sends the client <= 8 MB",
    "unvalidated-resend": "server sends a never-validated address <= 3x what came from it",
    "forged-cutoffs": "client's priorities unchanged",
    "overlapping-data": "conflicting request refused, never echoed",
}


# --------------------------------------------------------------------------------------- runner

# A fixed key for the harness only (32 bytes, base64): never use it anywhere else.
HARNESS_KEY = "aG9tYS1hdHRhY2staGFybmVzcy1rZXktMzItYnl0ZXM="


def security_args(args):
    """Demo arguments that turn packet authentication on for the server and the demo client."""
    if args.security == "off":
        return []
    return ["--homa.security.mode=%s" % args.security, "--homa.security.keys.1=" + HARNESS_KEY,
            "--homa.security.active-key=1"]


def run_attack(name, args, java_opts):
    fn, nominal = ATTACKS[name]
    pre, post = 2.0, 2.0
    port = args.port
    print("\n=== %s: fresh server on %s:%d" % (name, LOOPBACK, port), flush=True)
    server = Proc(["java"] + java_opts + ["-jar", args.jar, "--mode=server", "--port=%d" % port, "--kv-shards=1",
                                          "--homa.server.bind-address=127.0.0.1"] + security_args(args), "server")
    result = {"attack": name}
    legit = None
    sampler = None
    forger = Forger()
    ctx = None
    demo = None
    try:
        server.wait_for(r"listening on UDP", 120)
        duration = int(pre + nominal + post + 2.5)
        demo = Proc(["java", "-Xms128m", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-jar", args.jar, "--mode=client",
                     "--peer=%s:%d" % (LOOPBACK, port), "--workload=w3", "--concurrency=8",
                     "--duration=%ds" % duration, "--warmup=1s", "--probe-samples=3", "--rpc-timeout=3s",
                     "--kv-shards=1"] + security_args(args), "demo client")
        m = demo.wait_for(r"client \S*?:(\d+), seed", 120)
        demo_port = int(m.group(1))
        demo.wait_for(PROGRESS.pattern, 60)  # the measured run has started
        legit = LegitLoad((LOOPBACK, port))
        legit.start()
        live_before = heap_live_kb(server.popen.pid)
        sampler = HeapSampler(server.popen.pid)
        time.sleep(pre)
        ctx = Context((LOOPBACK, port), forger, demo_port, legit, server.popen.pid)
        ctx.result_back = None
        t0 = time.monotonic()
        print("attack running (demo client port %d, Python client port %d)" % (demo_port, legit.client.port),
              flush=True)
        fn(ctx)
        t1 = time.monotonic()
        time.sleep(0.3)
        live_after = heap_live_kb(server.popen.pid)
        time.sleep(post)
        t2 = time.monotonic()
        legit.stop()
        demo.popen.wait(duration + 30)
        result.update({
            "pkts": forger.packets, "bytes": forger.bytes,
            "back": ctx.result_back if ctx.result_back is not None else
            (" + ".join(c.summary() for c in ctx.catchers) if ctx.catchers else "-"),
            "demo_during": demo_client_window(demo, t0, t1),
            "demo_after": demo_client_window(demo, t1, t2),
            "py_before": legit.window(0, t0), "py_during": legit.window(t0, t1), "py_after": legit.window(t1, t2),
            "live_before": live_before, "live_after": live_after,
            "peak_before": sampler.peak(t0 - pre, t0), "peak_during": sampler.peak(t0, t1 + 0.3),
            "seconds": t1 - t0, "notes": ctx.notes,
        })
        total = re.search(r"^Total: .*$", demo.text(), re.M)
        failed = re.search(r"^[\d,]+ RPCs failed in all.*$", demo.text(), re.M)
        result["demo_total"] = total.group(0) if total else "(no Total line)"
        result["demo_first_failure"] = failed.group(0) if failed else None
    finally:
        if ctx:
            for c in ctx.catchers:
                c.close()
        forger.close()
        if legit and legit.thread.is_alive():
            legit.stop()
        if sampler:
            sampler.stop()
        if demo:
            demo.stop(grace=3)
        server.stop(grace=10)
        counters = re.search(r"Homa server engine: .*$", server.text(), re.M)
        result["server_counters"] = counters.group(0) if counters else "(server printed no counters)"
        dropped = re.search(r"Homa server transport: .*$", server.text(), re.M)
        if dropped:
            result["server_counters"] += "; " + dropped.group(0)
        for p in (demo, server):
            if p in Proc.all:
                Proc.all.remove(p)
    print_one(result)
    return result


def fmt_counts(d):
    return ", ".join("%s %d" % (k, v) for k, v in sorted(d.items())) or "none"


def fmt_demo(w):
    if not w:
        return "n/a"
    return "%d ok, %d failed, min %d RPC/s" % (w["ok"], w["failed"], w["min_rate"])


def mb(kb):
    return "?" if kb is None else "%.0f MB" % (kb / 1024)


def print_one(r):
    print("--- %s" % r["attack"])
    for key, label in (("pkts", "attacker packets"), ("bytes", "attacker bytes (Homa packets)"),
                       ("back", "sent back to forged/victim address")):
        if key in r:
            print("  %-36s %s" % (label, fmt(r[key]) if isinstance(r[key], int) else r[key]))
    if "demo_during" in r:
        print("  %-36s %s (rate before: %s RPC/s)" % ("demo client during attack", fmt_demo(r["demo_during"]),
                                                      (r["demo_during"] or {}).get("rate_before")))
        print("  %-36s %s" % ("demo client after attack", fmt_demo(r["demo_after"])))
        print("  %-36s %s" % ("demo client total", r["demo_total"]))
        if r.get("demo_first_failure"):
            print("  %-36s %s" % ("demo client failures", r["demo_first_failure"]))
        print("  %-36s before: %s | during: %s | after: %s" % ("python client calls", fmt_counts(r["py_before"]),
                                                                 fmt_counts(r["py_during"]),
                                                                 fmt_counts(r["py_after"])))
        print("  %-36s live %s -> %s (after full GC); peak used %s before, %s during" % (
            "server heap", mb(r["live_before"]), mb(r["live_after"]), mb(r["peak_before"]), mb(r["peak_during"])))
        for n in r["notes"]:
            print("  note: %s" % n)
    print("  %s" % r.get("server_counters"), flush=True)


def print_table(results):
    print("\n=== Summary (loopback; legitimate clients: demo W3 client, 8 outstanding; Python client 100 B/20 KB/200 KB"
          " echoes in turn)")
    head = ("attack", "attacker pkts / bytes", "back to forged/victim address", "demo client during attack",
            "python client during attack", "server live heap before -> after (peak used)", "checks")
    rows = []
    for r in results:
        if "error" in r:
            rows.append((r["attack"], "HARNESS ERROR", r["error"][:60], "", "", "", ""))
            continue
        heap = "%s -> %s (%s)" % (mb(r["live_before"]), mb(r["live_after"]), mb(r["peak_during"]))
        rows.append((r["attack"], "%s / %s" % (fmt(r["pkts"]), fmt(r["bytes"])), str(r["back"]),
                     fmt_demo(r["demo_during"]), fmt_counts(r["py_during"]), heap, WHAT_IT_CHECKS[r["attack"]]))
    widths = [max(len(str(x[i])) for x in rows + [head]) for i in range(len(head))]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |"
    print(line)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("attacks", nargs="*", default=["all"], help="attack names or 'all': " + ", ".join(ATTACKS))
    parser.add_argument("--jar", default="demo-services/target/demo-services.jar")
    parser.add_argument("--port", type=int, default=4300, help="UDP port of the demo server (default 4300)")
    parser.add_argument("--server-heap", default="1g", help="-Xmx of the demo server (default 1g)")
    parser.add_argument("--security", default="off", choices=["off", "authenticate", "encrypt"],
                        help="packet authentication of the demo server and client (they share a harness key; the"
                             " attacker and the Python client have none, so their packets are dropped)")
    args = parser.parse_args()
    names = list(ATTACKS) if args.attacks in (["all"], []) else args.attacks
    for n in names:
        if n not in ATTACKS:
            print("unknown attack '%s'; choose from: %s, all" % (n, ", ".join(ATTACKS)), file=sys.stderr)
            return 2
    if not os.path.isfile(args.jar):
        print("no demo jar at %s (build it first: benchmarks/attacks.sh does)" % args.jar, file=sys.stderr)
        return 1
    if os.geteuid() != 0:
        print("needs root (a raw socket forges loopback source addresses)", file=sys.stderr)
        return 1
    java_opts = ["-Xms256m", "-Xmx" + args.server_heap]

    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    results = []
    harness_error = False
    try:
        for n in names:
            try:
                results.append(run_attack(n, args, java_opts))
            except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                harness_error = True
                print("HARNESS ERROR in %s: %s" % (n, e), file=sys.stderr, flush=True)
                results.append({"attack": n, "error": str(e).splitlines()[0] if str(e) else repr(e)})
        print_table(results)
    finally:
        Proc.stop_all()
    return 1 if harness_error else 0


if __name__ == "__main__":
    sys.exit(main())
