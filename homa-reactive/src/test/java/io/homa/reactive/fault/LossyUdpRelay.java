package io.homa.reactive.fault;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * A fault-injecting UDP relay for integration tests, on real sockets: clients send to
 * {@link #address()}, the relay forwards each datagram to the server from a socket of its own per
 * client (so the server sees one distinct source per client), and relays the server's answers
 * back to that client. Every datagram, in both directions, meets the {@link Faults} in turn:
 * dropped, duplicated, delayed (uniformly up to {@code maxDelayNs}) or held back and released
 * after the next {@code reorderWindow} datagrams of its flow (or after {@value #REORDER_MAX_HOLD_MS}
 * ms, whichever comes first). The decisions come from one {@link Random} seeded with
 * {@link Faults#seed()}, a fixed number of draws per datagram, so the same datagram sequence meets
 * the same faults.
 *
 * <p>Port mirroring: Homa headers carry the UDP ports (the engine checks the server port of an ACK
 * against its own). With {@code mirrorPorts} the relay listens on {@code relayHost} at the server's
 * port, and forwards each client's datagrams from {@code relayHost} at that client's port, so every
 * port written in a header still names the endpoint on the other side; {@code relayHost} must then
 * be a different local address from the endpoints' (e.g. 127.0.0.2 when they are on 127.0.0.1).
 * Without it the relay translates ports as a NAT would.
 *
 * <p>One daemon thread does all the work (java.nio, non-blocking). A datagram the kernel refuses
 * (socket buffer full) is counted in {@link Counters#sendFailures()}. Held and delayed datagrams
 * still queued at {@link #close()} are discarded.
 */
final class LossyUdpRelay implements AutoCloseable {
    /** Longest a reordered datagram is held when no later datagram of its flow comes. */
    static final long REORDER_MAX_HOLD_MS = 20;
    private static final int SOCKET_BUFFER_BYTES = 4 * 1024 * 1024;
    private static final int MAX_DATAGRAM_BYTES = 65_535;
    /** Datagrams read from one socket before the loop looks at the others and at its timers. */
    private static final int READ_BATCH = 256;

    /**
     * Fault rates, each applied per datagram: a probability in [0, 1].
     *
     * @param seed seeds the decisions
     * @param dropRate share of datagrams dropped
     * @param duplicateRate share of (not dropped) datagrams sent twice
     * @param delayRate share of copies delayed by a uniform 0..maxDelayNs
     * @param maxDelayNs longest delay, 0..10 s
     * @param reorderRate share of (not delayed) copies held back
     * @param reorderWindow datagrams of the same flow sent before a held one, 1..1000
     */
    record Faults(
            long seed,
            double dropRate,
            double duplicateRate,
            double delayRate,
            long maxDelayNs,
            double reorderRate,
            int reorderWindow) {

        Faults {
            checkRate("dropRate", dropRate);
            checkRate("duplicateRate", duplicateRate);
            checkRate("delayRate", delayRate);
            checkRate("reorderRate", reorderRate);
            if (maxDelayNs < 0 || maxDelayNs > TimeUnit.SECONDS.toNanos(10)) {
                throw new IllegalArgumentException("maxDelayNs must be between 0 and 10 s, was " + maxDelayNs);
            }
            if (reorderWindow < 1 || reorderWindow > 1000) {
                throw new IllegalArgumentException("reorderWindow must be between 1 and 1000, was " + reorderWindow);
            }
        }

        /** 5% dropped, 1% duplicated, 2% delayed up to 50 ms, 1% reordered by 3 datagrams. */
        static Faults defaults(long seed) {
            return new Faults(seed, 0.05, 0.01, 0.02, TimeUnit.MILLISECONDS.toNanos(50), 0.01, 3);
        }

        /** No faults: a plain relay. */
        static Faults none(long seed) {
            return new Faults(seed, 0, 0, 0, 0, 0, 1);
        }

        private static void checkRate(String name, double rate) {
            if (!(rate >= 0 && rate <= 1)) {
                throw new IllegalArgumentException(name + " must be between 0 and 1, was " + rate);
            }
        }
    }

    /**
     * What the relay did, both directions together.
     *
     * @param received datagrams read
     * @param forwarded datagrams sent on (each copy of a duplicate counts)
     * @param dropped datagrams dropped on purpose
     * @param duplicated datagrams sent twice
     * @param delayed copies delayed
     * @param reordered copies held back behind later ones
     * @param sendFailures copies the kernel refused (send buffer full) or that failed to send
     */
    record Counters(
            long received, long forwarded, long dropped, long duplicated, long delayed, long reordered,
            long sendFailures) {
        @Override
        public String toString() {
            return String.format("received=%,d forwarded=%,d dropped=%,d duplicated=%,d delayed=%,d reordered=%,d"
                    + " sendFailures=%,d", received, forwarded, dropped, duplicated, delayed, reordered, sendFailures);
        }
    }

    /** Where a datagram goes: out of {@code channel} to {@code target}. */
    private record Flow(DatagramChannel channel, InetSocketAddress target) {}

    private static final class Held {
        final byte[] bytes;
        int remaining;
        final long deadlineNs;

        Held(byte[] bytes, int remaining, long deadlineNs) {
            this.bytes = bytes;
            this.remaining = remaining;
            this.deadlineNs = deadlineNs;
        }
    }

    private record Delayed(long releaseNs, long sequence, Flow flow, byte[] bytes) {}

    private final InetSocketAddress server;
    private final String relayHost;
    private final boolean mirrorPorts;
    private final Faults faults;
    private final Random random;
    private final Selector selector;
    private final DatagramChannel front;
    private final InetSocketAddress address;
    /** Client address to the socket its datagrams leave from, and back. Relay thread only. */
    private final Map<InetSocketAddress, DatagramChannel> upstreams = new HashMap<>();
    private final Map<Flow, ArrayDeque<Held>> held = new HashMap<>();
    private final PriorityQueue<Delayed> delayed = new PriorityQueue<>(
            (a, b) -> a.releaseNs != b.releaseNs ? Long.compare(a.releaseNs, b.releaseNs)
                    : Long.compare(a.sequence, b.sequence));
    private long delayedSequence;
    private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(MAX_DATAGRAM_BYTES);
    private final Thread thread;
    private volatile boolean running = true;
    private final AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();

    private final AtomicLong received = new AtomicLong();
    private final AtomicLong forwarded = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong duplicated = new AtomicLong();
    private final AtomicLong delayedCount = new AtomicLong();
    private final AtomicLong reordered = new AtomicLong();
    private final AtomicLong sendFailures = new AtomicLong();

    private LossyUdpRelay(InetSocketAddress server, String relayHost, boolean mirrorPorts, Faults faults)
            throws IOException {
        this.server = server;
        this.relayHost = relayHost;
        this.mirrorPorts = mirrorPorts;
        this.faults = faults;
        this.random = new Random(faults.seed());
        this.selector = Selector.open();
        try {
            this.front = open(new InetSocketAddress(relayHost, mirrorPorts ? server.getPort() : 0));
        } catch (IOException e) {
            selector.close();
            throw e;
        }
        this.address = (InetSocketAddress) front.getLocalAddress();
        front.register(selector, SelectionKey.OP_READ, null);
        this.thread = new Thread(this::run, "lossy-relay-" + address.getPort());
        thread.setDaemon(true);
    }

    /**
     * Starts a relay in front of {@code server}.
     *
     * @param server where datagrams from clients go
     * @param relayHost local address the relay's sockets bind to
     * @param mirrorPorts whether to bind at the server's port (clients' ports upstream); see the
     *     class comment
     * @param faults what to do to datagrams
     * @throws IOException if the relay's first socket cannot be bound
     */
    static LossyUdpRelay start(InetSocketAddress server, String relayHost, boolean mirrorPorts, Faults faults)
            throws IOException {
        LossyUdpRelay relay = new LossyUdpRelay(server, relayHost, mirrorPorts, faults);
        relay.thread.start();
        return relay;
    }

    /** Where clients send: the relay's client-facing socket. */
    InetSocketAddress address() {
        return address;
    }

    /** A snapshot of the counters (each read separately; exact once traffic stopped). */
    Counters counters() {
        return new Counters(received.get(), forwarded.get(), dropped.get(), duplicated.get(), delayedCount.get(),
                reordered.get(), sendFailures.get());
    }

    /** The first unexpected error of the relay thread (e.g. a client's upstream port taken), or null. */
    @Nullable Throwable failure() {
        return failure.get();
    }

    /** Stops the thread (waits up to 5 s) and closes every socket. */
    @Override
    public void close() {
        running = false;
        selector.wakeup();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<DatagramChannel> channels = new ArrayList<>(List.of(front));
        if (!thread.isAlive()) {
            channels.addAll(upstreams.values());
        }
        for (DatagramChannel channel : channels) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        try {
            selector.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        if (thread.isAlive()) {
            throw new IllegalStateException("relay thread did not stop within 5 s");
        }
    }

    private static DatagramChannel open(InetSocketAddress bindAddress) throws IOException {
        DatagramChannel channel = DatagramChannel.open();
        try {
            channel.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER_BYTES);
            channel.setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER_BYTES);
            channel.configureBlocking(false);
            channel.bind(bindAddress);
            return channel;
        } catch (IOException e) {
            channel.close();
            throw e;
        }
    }

    private void run() {
        try {
            while (running) {
                long nowNs = System.nanoTime();
                releaseDue(nowNs);
                long waitNs = nextDeadlineNs() - nowNs;
                if (waitNs <= 0) {
                    selector.selectNow();
                } else {
                    selector.select(Math.max(1, Math.min(100, TimeUnit.NANOSECONDS.toMillis(waitNs))));
                }
                Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext()) {
                    SelectionKey key = keys.next();
                    keys.remove();
                    if (key.isValid() && key.isReadable()) {
                        drain((DatagramChannel) key.channel(), (InetSocketAddress) key.attachment());
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            if (running) {
                failure.compareAndSet(null, e);
            }
        }
    }

    /** Reads up to a batch from {@code channel}: the front socket ({@code client} null) or a client's upstream. */
    private void drain(DatagramChannel channel, @Nullable InetSocketAddress client) throws IOException {
        for (int i = 0; i < READ_BATCH; i++) {
            readBuffer.clear();
            InetSocketAddress from = (InetSocketAddress) channel.receive(readBuffer);
            if (from == null) {
                return;
            }
            readBuffer.flip();
            byte[] bytes = new byte[readBuffer.remaining()];
            readBuffer.get(bytes);
            if (client == null) {
                DatagramChannel upstream = upstreamFor(from);
                if (upstream != null) {
                    relay(new Flow(upstream, server), bytes);
                }
            } else if (from.equals(server)) {
                relay(new Flow(front, client), bytes);
            }
        }
    }

    private @Nullable DatagramChannel upstreamFor(InetSocketAddress client) {
        DatagramChannel upstream = upstreams.get(client);
        if (upstream == null) {
            try {
                upstream = open(new InetSocketAddress(relayHost, mirrorPorts ? client.getPort() : 0));
                upstream.register(selector, SelectionKey.OP_READ, client);
            } catch (IOException e) {
                failure.compareAndSet(null, new IOException("cannot open the upstream socket of client " + client, e));
                dropped.incrementAndGet();
                return null;
            }
            upstreams.put(client, upstream);
        }
        return upstream;
    }

    private void relay(Flow flow, byte[] bytes) {
        received.incrementAndGet();
        // Always the same draws per datagram, so that decisions depend only on the seed and the order.
        boolean drop = random.nextDouble() < faults.dropRate();
        boolean duplicate = random.nextDouble() < faults.duplicateRate();
        double[] delayDraws = {random.nextDouble(), random.nextDouble()};
        double[] delayAmounts = {random.nextDouble(), random.nextDouble()};
        double[] reorderDraws = {random.nextDouble(), random.nextDouble()};
        if (drop) {
            dropped.incrementAndGet();
            return;
        }
        if (duplicate) {
            duplicated.incrementAndGet();
        }
        long nowNs = System.nanoTime();
        for (int copy = 0; copy < (duplicate ? 2 : 1); copy++) {
            if (delayDraws[copy] < faults.delayRate()) {
                delayedCount.incrementAndGet();
                long delayNs = (long) (delayAmounts[copy] * faults.maxDelayNs());
                delayed.add(new Delayed(nowNs + delayNs, delayedSequence++, flow, bytes));
            } else if (reorderDraws[copy] < faults.reorderRate()) {
                reordered.incrementAndGet();
                held.computeIfAbsent(flow, f -> new ArrayDeque<>()).add(new Held(
                        bytes, faults.reorderWindow(), nowNs + TimeUnit.MILLISECONDS.toNanos(REORDER_MAX_HOLD_MS)));
            } else {
                send(flow, bytes);
                countDownHeld(flow);
            }
        }
    }

    /** One datagram of {@code flow} went: release the held ones it was the last to overtake. */
    private void countDownHeld(Flow flow) {
        ArrayDeque<Held> queue = held.get(flow);
        if (queue == null) {
            return;
        }
        for (Iterator<Held> it = queue.iterator(); it.hasNext(); ) {
            Held h = it.next();
            if (--h.remaining == 0) {
                it.remove();
                send(flow, h.bytes);
            }
        }
        if (queue.isEmpty()) {
            held.remove(flow);
        }
    }

    private void releaseDue(long nowNs) {
        while (!delayed.isEmpty() && delayed.peek().releaseNs - nowNs <= 0) {
            Delayed d = delayed.poll();
            send(d.flow, d.bytes);
        }
        for (Iterator<Map.Entry<Flow, ArrayDeque<Held>>> flows = held.entrySet().iterator(); flows.hasNext(); ) {
            Map.Entry<Flow, ArrayDeque<Held>> entry = flows.next();
            for (Iterator<Held> it = entry.getValue().iterator(); it.hasNext(); ) {
                Held h = it.next();
                if (h.deadlineNs - nowNs <= 0) {
                    it.remove();
                    send(entry.getKey(), h.bytes);
                }
            }
            if (entry.getValue().isEmpty()) {
                flows.remove();
            }
        }
    }

    private long nextDeadlineNs() {
        long next = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
        if (!delayed.isEmpty() && delayed.peek().releaseNs - next < 0) {
            next = delayed.peek().releaseNs;
        }
        for (ArrayDeque<Held> queue : held.values()) {
            for (Held h : queue) {
                if (h.deadlineNs - next < 0) {
                    next = h.deadlineNs;
                }
            }
        }
        return next;
    }

    private void send(Flow flow, byte[] bytes) {
        try {
            if (flow.channel.send(ByteBuffer.wrap(bytes), flow.target) == 0) {
                sendFailures.incrementAndGet();
            } else {
                forwarded.incrementAndGet();
            }
        } catch (IOException e) {
            sendFailures.incrementAndGet();
        }
    }
}
