package io.homa.engine.sim;

import java.net.InetSocketAddress;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.Set;

/**
 * A seeded datagram network between simulated endpoints: every packet is lost, duplicated,
 * delayed (microseconds usually, up to seconds rarely, which also reorders) by the profile's
 * rates, or dropped while its two endpoints are partitioned. Deliveries wait in a priority queue
 * on {@code deliverAtNs}; the simulation's virtual clock jumps from one to the next.
 */
final class SimNetwork {

    /** Fault rates of one run. */
    record Profile(
            double lossRate,
            double duplicateRate,
            double longDelayRate,
            long baseDelayNs,
            long jitterNs,
            long longDelayMaxNs) {

        static Profile clean() {
            return new Profile(0, 0, 0, 2_000, 1_000, 0);
        }

        static Profile random(Random random) {
            return new Profile(
                    random.nextInt(4) == 0 ? 0 : random.nextDouble() * 0.10,
                    random.nextInt(3) == 0 ? 0 : random.nextDouble() * 0.03,
                    random.nextInt(3) == 0 ? 0 : random.nextDouble() * 0.005,
                    1_000 + random.nextInt(20_000),
                    random.nextInt(4) == 0 ? 0 : 1_000 + random.nextInt(200_000),
                    100_000_000L + (long) (random.nextDouble() * 3_000_000_000L));
        }
    }

    /** One datagram in flight. */
    record Delivery(long deliverAtNs, long sequence, InetSocketAddress from, InetSocketAddress to, byte[] bytes)
            implements Comparable<Delivery> {
        @Override
        public int compareTo(Delivery other) {
            int byTime = Long.compare(deliverAtNs, other.deliverAtNs);
            return byTime != 0 ? byTime : Long.compare(sequence, other.sequence);
        }
    }

    private final Random random;
    private final Profile profile;
    private final PriorityQueue<Delivery> inFlight = new PriorityQueue<>();
    private long sequence;
    /** Endpoints cut off from everyone while a partition lasts (empty when none). */
    Set<InetSocketAddress> partitioned = Set.of();

    long sent;
    long lost;
    long duplicated;
    long delayedLong;
    long partitionDrops;

    SimNetwork(Random random, Profile profile) {
        this.random = random;
        this.profile = profile;
    }

    /** Takes a packet from {@code from} at {@code nowNs}; the bytes must be the caller's own copy. */
    void send(long nowNs, InetSocketAddress from, InetSocketAddress to, byte[] bytes) {
        sent++;
        if (partitioned.contains(from) || partitioned.contains(to)) {
            partitionDrops++;
            return;
        }
        if (random.nextDouble() < profile.lossRate()) {
            lost++;
            return;
        }
        schedule(nowNs, from, to, bytes);
        if (random.nextDouble() < profile.duplicateRate()) {
            duplicated++;
            schedule(nowNs, from, to, bytes);
        }
    }

    private void schedule(long nowNs, InetSocketAddress from, InetSocketAddress to, byte[] bytes) {
        long delayNs = profile.baseDelayNs();
        if (profile.jitterNs() > 0) {
            delayNs += (long) (random.nextDouble() * profile.jitterNs());
        }
        if (profile.longDelayRate() > 0 && random.nextDouble() < profile.longDelayRate()) {
            delayedLong++;
            delayNs += (long) (random.nextDouble() * profile.longDelayMaxNs());
        }
        inFlight.add(new Delivery(nowNs + delayNs, sequence++, from, to, bytes));
    }

    /** When the next delivery is due, or {@link Long#MAX_VALUE}. */
    long nextDeliveryNs() {
        Delivery next = inFlight.peek();
        return next == null ? Long.MAX_VALUE : next.deliverAtNs();
    }

    /** The next delivery if it is due at or before {@code nowNs}, else null. */
    Delivery pollDue(long nowNs) {
        Delivery next = inFlight.peek();
        return next != null && next.deliverAtNs() <= nowNs ? inFlight.poll() : null;
    }

    int inFlightCount() {
        return inFlight.size();
    }

    @Override
    public String toString() {
        return "network{sent=" + sent + ", lost=" + lost + ", duplicated=" + duplicated + ", delayedLong="
                + delayedLong + ", partitionDrops=" + partitionDrops + ", " + profile + "}";
    }
}
