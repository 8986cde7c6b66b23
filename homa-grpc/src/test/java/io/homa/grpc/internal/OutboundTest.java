package io.homa.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

class OutboundTest {
    /** Items the requester asks for beyond those it received. */
    private static final int AHEAD = 2;

    @Test
    void shouldSendOnlyWhatWasRequestedAndBufferTheRest() {
        List<byte[]> received = new ArrayList<>();
        AtomicInteger readyCalls = new AtomicInteger();
        Outbound outbound = new Outbound(readyCalls::incrementAndGet, () -> { });
        AtomicReference<Subscription> subscription = new AtomicReference<>();
        outbound.subscribe(collecting(received, subscription));

        assertThat(outbound.isReady()).isFalse();
        outbound.offer(new byte[] {1});
        outbound.offer(new byte[] {2});
        assertThat(received).isEmpty();

        subscription.get().request(1);
        assertThat(received).hasSize(1);
        assertThat(readyCalls).as("demand 1 does not cover the 2 offered").hasValue(0);

        subscription.get().request(2);
        assertThat(received).hasSize(2);
        assertThat(outbound.isReady()).isTrue();
        assertThat(readyCalls).as("demand 3 covers them: ready").hasValue(1);
    }

    @Test
    void shouldSayReadyOnceWhenTheDemandStartsToCoverTheOffers() {
        AtomicInteger readyCalls = new AtomicInteger();
        Outbound outbound = new Outbound(readyCalls::incrementAndGet, () -> { });
        AtomicReference<Subscription> subscription = new AtomicReference<>();
        outbound.subscribe(collecting(new ArrayList<>(), subscription));

        subscription.get().request(2);
        assertThat(readyCalls).hasValue(1);
        subscription.get().request(5);
        assertThat(readyCalls).as("already ready: no second onReady").hasValue(1);
        for (int i = 0; i < 7; i++) {
            outbound.offer(new byte[1]);
        }
        assertThat(outbound.isReady()).isFalse();
        subscription.get().request(1);
        assertThat(readyCalls).hasValue(2);
    }

    @Test
    void shouldStayReadyUnderAnUnboundedDemand() {
        AtomicInteger readyCalls = new AtomicInteger();
        Outbound outbound = new Outbound(readyCalls::incrementAndGet, () -> { });
        AtomicReference<Subscription> subscription = new AtomicReference<>();
        List<byte[]> received = new ArrayList<>();
        outbound.subscribe(collecting(received, subscription));

        subscription.get().request(Long.MAX_VALUE);
        for (int i = 0; i < 1_000; i++) {
            outbound.offer(new byte[1]);
        }
        subscription.get().request(Long.MAX_VALUE);
        subscription.get().request(3);

        assertThat(received).hasSize(1_000);
        assertThat(outbound.isReady()).isTrue();
        assertThat(readyCalls).hasValue(1);
    }

    /**
     * A gRPC server stream as a blocking client reads it: one message asked for at a time, the
     * next once the last arrived, while the application sends on its own thread whenever the
     * stream is ready and waits for onReady otherwise. Every request that makes the stream ready
     * must reach the application: a request racing with the offer that used up the last demand
     * once read "offered" before the offer and "demanded" after it, saw no transition, and left
     * the application waiting for an onReady that never came (a server stream that stalled with
     * both ends idle).
     */
    @Test
    void shouldNeverLoseTheOnReadyOfARequestThatRacesWithAnOffer() throws Exception {
        // The race is a few instructions wide: the old accounting lost 4 wake-ups in 5,000,000
        // items on 2 busy cores, so this fails on it more often than not.
        int total = 2_000_000;
        ExecutorService application = Executors.newSingleThreadExecutor();
        AtomicInteger queuedOrRunning = new AtomicInteger();
        AtomicInteger offered = new AtomicInteger();
        AtomicInteger received = new AtomicInteger();
        AtomicReference<Outbound> stream = new AtomicReference<>();
        Runnable sendWhileReady = () -> {
            Outbound outbound = stream.get();
            while (outbound.isReady() && offered.get() < total) {
                offered.incrementAndGet();
                outbound.offer(new byte[1]);
            }
        };
        Runnable onReady = () -> {
            queuedOrRunning.incrementAndGet();
            application.execute(() -> {
                try {
                    sendWhileReady.run();
                } finally {
                    queuedOrRunning.decrementAndGet();
                }
            });
        };
        Outbound outbound = new Outbound(onReady, () -> { });
        stream.set(outbound);
        AtomicReference<Subscription> subscription = new AtomicReference<>();
        outbound.subscribe(counting(received, subscription));

        // The requester keeps a little demand ahead of what arrived, as the RPC layer's batch
        // requests do: its requests then land while the application is still sending.
        int[] lostWakeUps = {0};
        Runnable checkForLostWakeUp = () -> {
            // request() submits the onReady it owes before it returns, and only this thread
            // requests: an idle application on a ready stream missed one
            if (queuedOrRunning.get() == 0 && outbound.isReady() && offered.get() < total) {
                lostWakeUps[0]++;
                onReady.run();
            }
        };
        try {
            for (int asked = 1; asked <= total + AHEAD; asked++) {
                while (received.get() < Math.min(asked, total) - AHEAD) {
                    checkForLostWakeUp.run();
                    Thread.onSpinWait();
                }
                if (asked <= total) {
                    subscription.get().request(1);
                }
                checkForLostWakeUp.run();
            }
            while (received.get() < total) {
                checkForLostWakeUp.run();
                Thread.onSpinWait();
            }
        } finally {
            application.shutdownNow();
            application.awaitTermination(1, TimeUnit.MINUTES);
        }

        assertThat(lostWakeUps[0]).as("requests whose onReady never came").isZero();
        assertThat(received).hasValue(total);
    }

    private static Subscriber<byte[]> collecting(List<byte[]> into, AtomicReference<Subscription> subscription) {
        return subscriber(into::add, subscription);
    }

    private static Subscriber<byte[]> counting(AtomicInteger count, AtomicReference<Subscription> subscription) {
        return subscriber(item -> count.incrementAndGet(), subscription);
    }

    /** A subscriber that keeps its subscription in {@code subscription} and hands each item to {@code onNext}. */
    private static Subscriber<byte[]> subscriber(Consumer<byte[]> onNext, AtomicReference<Subscription> subscription) {
        return new Subscriber<>() {
            @Override
            public void onSubscribe(Subscription s) {
                subscription.set(s);
            }

            @Override
            public void onNext(byte[] item) {
                onNext.accept(item);
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onComplete() {
            }
        };
    }
}
