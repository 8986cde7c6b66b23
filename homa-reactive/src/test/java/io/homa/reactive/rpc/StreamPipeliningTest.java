package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.engine.EngineCounters;
import io.homa.reactive.HomaRequest;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.internal.rpc.EnvelopeCodec;
import io.homa.reactive.internal.rpc.FrameCodec;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.lang.reflect.Type;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * Pipelined streams: batch requests and pushes numbered ({@link RpcMetadata#STREAM_SEQ}) and
 * taken in order by the server whatever order they arrive in, and a duplicate or out-of-window
 * number failing the stream with INVALID_ARGUMENT.
 */
class StreamPipeliningTest {
    private static final InetSocketAddress CLIENT = new InetSocketAddress("127.0.0.1", 40000);
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Type INTEGERS = TestTypes.fluxOf(Integer.class);

    private final Scheduler scheduler = Schedulers.newSingle("pipelining-test");
    private final JsonPayloadCodec codec = new JsonPayloadCodec();
    /** What the server's request-stream method received, in order. */
    private final List<Integer> received = new CopyOnWriteArrayList<>();
    private final AtomicReference<Throwable> receivedError = new AtomicReference<>();
    private final AtomicLong requestedFromProducer = new AtomicLong();
    // A linger far above any pause of this thread: a batch ends because it is full, never because a
    // pause between two items let the linger run out.
    private final RpcDispatcher dispatcher = new RpcDispatcher(codec, scheduler)
            .streamBatchLinger(Duration.ofSeconds(1))
            .register(RpcMethod.stream("numbers", "range", new Type[] {int.class},
                    args -> Flux.range(0, (Integer) args[0]).doOnRequest(requestedFromProducer::addAndGet)))
            .register(RpcMethod.clientStream("numbers", "collect", new Type[] {INTEGERS},
                    args -> integers(args[0])
                            .doOnNext(received::add)
                            .doOnError(receivedError::set)
                            .count()));

    /** Runs the dispatcher, one request at a time, as a server's event loop would. */
    private final Scheduler serverLoop = Schedulers.newSingle("pipelining-server");

    @AfterEach
    void disposeScheduler() {
        scheduler.dispose();
        serverLoop.dispose();
    }

    @SuppressWarnings("unchecked")
    private static Flux<Integer> integers(Object argument) {
        return (Flux<Integer>) argument;
    }

    @Test
    void shouldNameTheWindowAndTheBatchLimitInTheAnswerToAnOpen() {
        dispatcher.streamWindowBytes(3 * 1024 * 1024).streamBatchBytes(1024 * 1024);

        RpcEnvelope.Response stream = open("range", 3, 5);
        RpcEnvelope.Response channel = openChannel();

        for (RpcEnvelope.Response open : List.of(stream, channel)) {
            assertThat(open.metadata())
                    .containsEntry(RpcMetadata.STREAM_WINDOW_BYTES, Integer.toString(3 * 1024 * 1024))
                    .containsEntry(RpcMetadata.STREAM_BATCH_BYTES, Integer.toString(1024 * 1024));
        }
        assertThat(RpcMetadata.batchesInFlight(3 * 1024 * 1024, 1024 * 1024)).isEqualTo(3);
        assertThat(RpcMetadata.batchesInFlight(0, 1024)).isEqualTo(1);
        assertThat(RpcMetadata.batchesInFlight(Integer.MAX_VALUE, 1)).isEqualTo(RpcMetadata.MAX_STREAM_BATCHES_IN_FLIGHT);
    }

    @Test
    void shouldAnswerBatchRequestsInTheOrderOfTheirNumbersWhateverOrderTheyArriveIn() {
        RpcEnvelope.Response first = open("range", 2, 10);
        String id = first.metadata().get(RpcMetadata.STREAM_ID);

        // batch 2 arrives before batch 1: it waits for it, and takes the items after batch 1's
        Mono<RpcEnvelope.Response> second = handleLater(next(id, 2, 3));
        AtomicReference<RpcEnvelope.Response> secondAnswer = new AtomicReference<>();
        second.subscribe(secondAnswer::set);
        assertThat(secondAnswer.get()).as("batch 2 waits for batch 1").isNull();
        assertThat(requestedFromProducer.get()).as("nothing requested for a batch that waits its turn").isEqualTo(2);
        RpcEnvelope.Response one = handle(next(id, 1, 3));
        RpcEnvelope.Response three = handle(next(id, 3, 10));

        assertThat(items(first)).containsExactly("0", "1");
        assertThat(items(one)).containsExactly("2", "3", "4");
        await(secondAnswer);
        assertThat(items(secondAnswer.get())).containsExactly("5", "6", "7");
        assertThat(items(three)).containsExactly("8", "9");
        assertThat(three.metadata()).containsEntry(RpcMetadata.STREAM_END, "true");
        // exactly what the batches asked for, no more
        assertThat(requestedFromProducer.get()).isEqualTo(2 + 3 + 3 + 10);
        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldAnswerTheBatchRequestsAfterTheEndWithAnEmptyEnd() {
        RpcEnvelope.Response first = open("range", 1, 3);
        String id = first.metadata().get(RpcMetadata.STREAM_ID);
        AtomicReference<RpcEnvelope.Response> later = new AtomicReference<>();
        handleLater(next(id, 2, 5)).subscribe(later::set);

        RpcEnvelope.Response one = handle(next(id, 1, 5));

        assertThat(items(one)).containsExactly("1", "2");
        assertThat(one.metadata()).containsEntry(RpcMetadata.STREAM_END, "true");
        await(later);
        assertThat(later.get().status()).isEqualTo(HomaStatus.OK);
        assertThat(items(later.get())).isEmpty();
        assertThat(later.get().metadata()).containsEntry(RpcMetadata.STREAM_END, "true");
        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldHoldAWatchForTheEndUntilTheFluxEndsAndAnswerItEmptyOnceALaterBatchRequestIsTaken() {
        Sinks.Many<Integer> source = Sinks.many().unicast().onBackpressureBuffer();
        dispatcher.register(RpcMethod.stream("numbers", "held", new Type[] {int.class}, args -> source.asFlux()));
        source.tryEmitNext(7);
        source.tryEmitNext(8);

        RpcEnvelope.Response first = open("held", 2, 0);
        String id = first.metadata().get(RpcMetadata.STREAM_ID);
        assertThat(first.metadata()).containsEntry(RpcMetadata.STREAM_WATCH, "true");
        assertThat(items(first)).containsExactly("7", "8");
        AtomicReference<RpcEnvelope.Response> watch = new AtomicReference<>();
        handleLater(next("held", id, 1, 0)).subscribe(watch::set);
        assertThat(watch.get()).as("a watch waits while the Flux has not ended").isNull();
        AtomicReference<RpcEnvelope.Response> second = new AtomicReference<>();
        handleLater(next("held", id, 2, 1)).subscribe(second::set);
        await(watch);
        assertThat(items(watch.get())).isEmpty();
        assertThat(watch.get().metadata()).doesNotContainKey(RpcMetadata.STREAM_END);
        assertThat(second.get()).as("the later batch request waits for its item").isNull();
        source.tryEmitNext(9);
        await(second);
        assertThat(items(second.get())).containsExactly("9");
        AtomicReference<RpcEnvelope.Response> end = new AtomicReference<>();
        handleLater(next("held", id, 3, 0)).subscribe(end::set);
        assertThat(end.get()).isNull();
        source.tryEmitComplete();

        await(end);
        assertThat(end.get().status()).isEqualTo(HomaStatus.OK);
        assertThat(items(end.get())).isEmpty();
        assertThat(end.get().metadata()).containsEntry(RpcMetadata.STREAM_END, "true");
        assertThat(requestedFromProducer.get()).isZero();
        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldAnswerAWatchAloneAtTheIdleTimeoutAndCancelTheStreamWhenNoOtherFollows() {
        AtomicLong nowNs = new AtomicLong();
        long idleNs = Duration.ofMillis(50).toNanos();
        dispatcher.clock(nowNs::get).streamIdleTimeout(Duration.ofNanos(idleNs));
        Sinks.Many<Integer> source = Sinks.many().unicast().onBackpressureBuffer();
        dispatcher.register(RpcMethod.stream("numbers", "held", new Type[] {int.class}, args -> source.asFlux()));
        source.tryEmitNext(7);
        String id = open("held", 1, 0).metadata().get(RpcMetadata.STREAM_ID);

        for (int seq = 1; seq <= 2; seq++) {
            AtomicReference<RpcEnvelope.Response> watch = new AtomicReference<>();
            handleLater(next("held", id, seq, 0)).subscribe(watch::set);
            assertThat(watch.get()).isNull();
            // the idle checks run on real time but measure on this clock: only now has the timeout passed
            nowNs.addAndGet(idleNs + 1);
            await(watch);
            assertThat(watch.get().status()).isEqualTo(HomaStatus.OK);
            assertThat(items(watch.get())).isEmpty();
            assertThat(watch.get().metadata()).doesNotContainKey(RpcMetadata.STREAM_END);
            assertThat(dispatcher.inFlight()).as("the stream is still open").isEqualTo(1);
            assertThat(source.currentSubscriberCount()).isEqualTo(1);
        }
        nowNs.addAndGet(idleNs + 1);

        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
        org.awaitility.Awaitility.await().atMost(TIMEOUT).until(() -> source.currentSubscriberCount() == 0);
    }

    @Test
    void shouldCompleteAStreamAndAChannelWhoseSubscriberAskedForExactlyTheirItems() {
        dispatcher.register(RpcMethod.bidiStream("numbers", "echo", new Type[] {INTEGERS}, args -> integers(args[0])));
        HomaClient client = HomaClient.builder(new ReorderingTransport())
                .resolver(StaticServiceResolver.of("numbers", CLIENT))
                .codecs(PayloadCodecs.of(codec))
                .streamBatchSize(2)
                .build();

        // Reactive Streams deliver the end without demand: it must reach a subscriber with none left
        StepVerifier.create(client.stream("numbers", "range", new Object[] {5}, Integer.class,
                        CallOptions.defaults()), 5)
                .expectNext(0, 1, 2, 3, 4)
                .expectComplete()
                .verify(TIMEOUT);
        StepVerifier.create(client.channel("numbers", "echo", new Object[] {Flux.range(0, 3)}, Integer.class,
                        CallOptions.defaults()), 3)
                .expectNext(0, 1, 2)
                .expectComplete()
                .verify(TIMEOUT);
        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldEndAChannelWithTheServersEndWhenAPushFindsTheStreamGoneBeforeThatEndArrives() {
        // the method ends without taking the request stream: pushes still in flight find the stream gone
        dispatcher.register(RpcMethod.bidiStream("numbers", "ignore", new Type[] {INTEGERS}, args -> Flux.just(1, 2)));
        ReorderingTransport transport = new ReorderingTransport();
        transport.holdEnds = Duration.ofMillis(200);
        HomaClient client = HomaClient.builder(transport)
                .resolver(StaticServiceResolver.of("numbers", CLIENT))
                .codecs(PayloadCodecs.of(codec))
                .build();

        for (int i = 0; i < 3; i++) {
            StepVerifier.create(client.channel("numbers", "ignore", new Object[] {Flux.range(0, 100_000)},
                            Integer.class, CallOptions.defaults()))
                    .expectNext(1, 2)
                    .expectComplete()
                    .verify(TIMEOUT);
        }
        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldAnswerAnEagerBatchRequestWithTheItemsItHoldsAndANonEagerOneOnlyWhenFullOrAtTheLinger() {
        Sinks.Many<Integer> source = Sinks.many().unicast().onBackpressureBuffer();
        dispatcher.register(RpcMethod.stream("numbers", "held", new Type[] {int.class}, args -> source.asFlux()));
        source.tryEmitNext(7);

        AtomicReference<RpcEnvelope.Response> eager = new AtomicReference<>();
        handleLater(EnvelopeCodec.encodeRequest("numbers", "held", "json", Map.of(RpcMetadata.STREAM,
                RpcMetadata.STREAM_OPEN, RpcMetadata.STREAM_REQUEST, "2", RpcMetadata.STREAM_EAGER, "true"),
                codec.encodeArguments(new Object[] {0}))).subscribe(eager::set);
        await(eager);
        assertThat(items(eager.get())).as("one of the two asked for, at once").containsExactly("7");
        String id = eager.get().metadata().get(RpcMetadata.STREAM_ID);

        AtomicReference<RpcEnvelope.Response> plain = new AtomicReference<>();
        handleLater(next("held", id, 1, 2)).subscribe(plain::set);
        source.tryEmitNext(8);
        assertThat(plain.get()).as("a batch without the flag waits to be full (or the linger)").isNull();
        source.tryEmitNext(9);
        await(plain);
        assertThat(items(plain.get())).containsExactly("8", "9");
        source.tryEmitComplete();
    }

    @Test
    void shouldFailTheStreamOnABatchRequestNumberedTwice() {
        RpcEnvelope.Response first = open("range", 1, 100);
        String id = first.metadata().get(RpcMetadata.STREAM_ID);
        AtomicReference<RpcEnvelope.Response> waiting = new AtomicReference<>();
        handleLater(next(id, 3, 5)).subscribe(waiting::set);

        RpcEnvelope.Response again = handle(next(id, 3, 5));

        assertThat(again.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(again.message()).isEqualTo("stream " + id + " of numbers.range got batch request 3 twice");
        await(waiting);
        assertThat(waiting.get().status()).as("the stream failed").isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(handle(next(id, 1, 5)).status()).isEqualTo(HomaStatus.NOT_FOUND);
        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldFailTheStreamOnABatchRequestBeyondTheWindowOrTakenBefore() {
        // 2 MiB in batches of 512 KiB: 4 batch requests in flight and a watch for the end, numbers 1 to 5 at first
        dispatcher.streamWindowBytes(2 * 1024 * 1024);
        String id = open("range", 1, 100).metadata().get(RpcMetadata.STREAM_ID);
        RpcEnvelope.Response beyond = handle(next(id, 6, 1));
        String other = open("range", 1, 100).metadata().get(RpcMetadata.STREAM_ID);
        assertThat(items(handle(next(other, 1, 1)))).containsExactly("1");
        RpcEnvelope.Response taken = handle(next(other, 1, 1));
        RpcEnvelope.Response malformed = handle(next(open("range", 1, 100).metadata().get(RpcMetadata.STREAM_ID), 0, 1));

        assertThat(beyond.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(beyond.message()).isEqualTo("stream " + id + " of numbers.range got batch request 6 beyond its"
                + " window: it takes 1 to 5 now");
        assertThat(taken.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(taken.message()).endsWith("got batch request 1 twice");
        assertThat(malformed.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(malformed.message()).isEqualTo("metadata homa-stream-seq must be a positive whole number, was '0'");
        assertThat(handle(next(id, 1, 1)).status()).as("the stream failed").isEqualTo(HomaStatus.NOT_FOUND);
        assertThat(handle(next(other, 2, 1)).status()).as("the stream failed").isEqualTo(HomaStatus.NOT_FOUND);
    }

    @Test
    void shouldHandPushedItemsToTheMethodInTheOrderOfThePushesWhateverOrderTheyArriveIn() {
        String id = openChannel().metadata().get(RpcMetadata.STREAM_ID);
        // count() asks for items once its result is asked for; a push without items gets the credit then
        AtomicReference<RpcEnvelope.Response> result = new AtomicReference<>();
        handleLater(next("collect", id, 1, 2)).subscribe(result::set);
        RpcEnvelope.Response poll = handle(push(id, 1, List.of(), false));
        assertThat(Long.parseLong(poll.metadata().get(RpcMetadata.STREAM_CREDIT))).isPositive();

        AtomicReference<RpcEnvelope.Response> third = new AtomicReference<>();
        AtomicReference<RpcEnvelope.Response> second = new AtomicReference<>();
        handleLater(push(id, 4, List.of(5), true)).subscribe(third::set);
        handleLater(push(id, 3, List.of(3, 4), false)).subscribe(second::set);
        assertThat(received).as("pushes 3 and 4 wait for push 2").isEmpty();
        RpcEnvelope.Response first = handle(push(id, 2, List.of(0, 1, 2), false));

        assertThat(first.status()).isEqualTo(HomaStatus.OK);
        await(second);
        await(third);
        assertThat(second.get().status()).isEqualTo(HomaStatus.OK);
        assertThat(third.get().status()).isEqualTo(HomaStatus.OK);
        assertThat(received).containsExactly(0, 1, 2, 3, 4, 5);
        await(result);
        assertThat(items(result.get())).containsExactly("6");
        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldFailTheChannelOnAPushNumberedTwiceOrBeyondTheWindow() {
        String id = openChannel().metadata().get(RpcMetadata.STREAM_ID);
        AtomicReference<RpcEnvelope.Response> waiting = new AtomicReference<>();
        handleLater(push(id, 2, List.of(1), false)).subscribe(waiting::set);

        RpcEnvelope.Response again = handle(push(id, 2, List.of(1), false));

        assertThat(again.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(again.message()).isEqualTo("the request stream of numbers.collect got push 2 twice");
        await(waiting);
        await(receivedError);
        assertThat(receivedError.get()).hasMessage("the request stream of numbers.collect got push 2 twice");
        assertThat(handle(push(id, 1, List.of(0), false)).status()).as("the channel failed").isEqualTo(HomaStatus.NOT_FOUND);

        dispatcher.streamWindowBytes(0);
        String small = openChannel().metadata().get(RpcMetadata.STREAM_ID);
        RpcEnvelope.Response beyond = handle(push(small, 2, List.of(1), false));
        assertThat(beyond.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(beyond.message()).isEqualTo("the request stream of numbers.collect got push 2 beyond its window:"
                + " it takes 1 to 1 now");
        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldBoundTheBytesOfPushesWaitingForTheirTurn() {
        dispatcher.streamWindowBytes(64).streamBatchBytes(16);
        String id = openChannel().metadata().get(RpcMetadata.STREAM_ID);
        AtomicReference<RpcEnvelope.Response> waiting = new AtomicReference<>();
        // 4 items of 1 digit: 4 + 4 x 5 = 24 bytes each
        handleLater(push(id, 2, List.of(1, 2, 3, 4), false)).subscribe(waiting::set);
        AtomicReference<RpcEnvelope.Response> alsoWaiting = new AtomicReference<>();
        handleLater(push(id, 3, List.of(5, 6, 7, 8), false)).subscribe(alsoWaiting::set);

        RpcEnvelope.Response tooMuch = handle(push(id, 4, List.of(9, 9, 9, 9), false));

        assertThat(tooMuch.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(tooMuch.message()).isEqualTo("the request stream of numbers.collect got push 4 beyond its window:"
                + " 72 bytes waiting, more than the window of 64 bytes");
        await(waiting);
        await(alsoWaiting);
        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldEmitStreamedItemsInOrderWhenBatchesArriveOutOfOrderAndAskTheServerForAtMostOneRequestAhead() {
        int items = 2_000;
        AtomicLong clientRequested = new AtomicLong();
        AtomicLong mostAhead = new AtomicLong(Long.MIN_VALUE);
        dispatcher.register(RpcMethod.stream("numbers", "watched", new Type[] {int.class},
                args -> Flux.range(0, (Integer) args[0]).doOnRequest(n -> mostAhead.accumulateAndGet(
                        requestedFromProducer.addAndGet(n) - clientRequested.get(), Math::max))));
        ReorderingTransport transport = new ReorderingTransport();
        HomaClient client = HomaClient.builder(transport)
                .resolver(StaticServiceResolver.of("numbers", CLIENT))
                .codecs(PayloadCodecs.of(codec))
                .streamBatchSize(16)
                .build();
        List<Integer> emitted = new CopyOnWriteArrayList<>();
        CountDownLatch finished = new CountDownLatch(1);
        // asks for 50 at a time, each time it got the 50 before: four batch RPCs in flight at once
        BaseSubscriber<Integer> subscriber = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription subscription) {
                request(50);
            }

            @Override
            protected void hookOnNext(Integer value) {
                emitted.add(value);
                if (emitted.size() % 50 == 0) {
                    request(50);
                }
            }

            @Override
            protected void hookFinally(reactor.core.publisher.SignalType type) {
                finished.countDown();
            }
        };

        client.stream("numbers", "watched", new Object[] {items}, Integer.class, CallOptions.defaults())
                .doOnRequest(clientRequested::addAndGet)
                .subscribe(subscriber);

        awaitLatch(finished);
        assertThat(emitted).containsExactlyElementsOf(java.util.stream.IntStream.range(0, items).boxed().toList());
        assertThat(transport.swapped("next")).as("batch RPCs delivered out of order").isPositive();
        // The server's Flux is asked for at most one of the subscriber's requests (50) beyond what it asked for.
        assertThat(mostAhead.get()).isLessThanOrEqualTo(50);
        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldHandPushedItemsToTheMethodInOrderWhenPushesArriveOutOfOrderAndRunAtMostOneRequestAheadOfItsDemand() {
        int items = 2_000;
        AtomicLong methodRequested = new AtomicLong();
        AtomicLong sourceEmitted = new AtomicLong();
        AtomicLong mostAhead = new AtomicLong(Long.MIN_VALUE);
        dispatcher.register(RpcMethod.bidiStream("numbers", "doubled", new Type[] {INTEGERS},
                args -> integers(args[0]).doOnRequest(methodRequested::addAndGet).limitRate(32).map(i -> 2 * i)));
        ReorderingTransport transport = new ReorderingTransport();
        HomaClient client = HomaClient.builder(transport)
                .resolver(StaticServiceResolver.of("numbers", CLIENT))
                .codecs(PayloadCodecs.of(codec))
                .streamBatchSize(8)
                .build();
        Flux<Integer> source = Flux.range(0, items).doOnNext(i -> mostAhead.accumulateAndGet(
                sourceEmitted.incrementAndGet() - methodRequested.get(), Math::max));

        List<Integer> results = client.channel("numbers", "doubled", new Object[] {source}, Integer.class,
                        CallOptions.defaults())
                .limitRate(64)
                .collectList()
                .block(Duration.ofSeconds(60));

        assertThat(results).containsExactlyElementsOf(
                java.util.stream.IntStream.range(0, items).map(i -> 2 * i).boxed().toList());
        assertThat(transport.swapped("push")).as("pushes delivered out of order").isPositive();
        assertThat(transport.swapped("next")).as("batch RPCs delivered out of order").isPositive();
        // The source runs at most one of the method's requests (limitRate's 32) ahead of what it asked for.
        assertThat(mostAhead.get()).isLessThanOrEqualTo(32);
        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldFailTheStreamWithInternalWhenABatchCarriesMoreItemsThanItAskedFor() {
        ReorderingTransport transport = new ReorderingTransport();
        // the server's answers carry one item more than they should
        transport.rewrite = bytes -> {
            RpcEnvelope.Response response = EnvelopeCodec.decodeResponse(bytes);
            List<byte[]> frames = new ArrayList<>(FrameCodec.decodeFrames(response.payload()));
            frames.add(codec.encode(99));
            return EnvelopeCodec.encodeResponse(response.status(), response.message(), response.metadata(),
                    FrameCodec.encodeFrames(frames));
        };
        HomaClient client = HomaClient.builder(transport)
                .resolver(StaticServiceResolver.of("numbers", CLIENT))
                .codecs(PayloadCodecs.of(codec))
                .build();

        reactor.test.StepVerifier.create(client.stream("numbers", "range", new Object[] {10}, Integer.class,
                        CallOptions.defaults()), 2)
                .expectErrorSatisfies(e -> {
                    assertThat(e).hasMessage("bad stream batch from numbers.range: 3 items, 2 asked for");
                    assertThat(((io.homa.reactive.HomaException) e).status()).isEqualTo(HomaStatus.INTERNAL);
                })
                .verify(TIMEOUT);
        RpcDispatcherTest.awaitInFlight(dispatcher, 0);
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            assertThat(latch.await(60, TimeUnit.SECONDS)).as("the stream ended").isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private RpcEnvelope.Response open(String method, int request, int argument) {
        return handle(EnvelopeCodec.encodeRequest("numbers", method, "json",
                Map.of(RpcMetadata.STREAM, RpcMetadata.STREAM_OPEN, RpcMetadata.STREAM_REQUEST, Integer.toString(request)),
                codec.encodeArguments(new Object[] {argument})));
    }

    private RpcEnvelope.Response openChannel() {
        return handle(EnvelopeCodec.encodeRequest("numbers", "collect", "json",
                Map.of(RpcMetadata.STREAM, RpcMetadata.STREAM_OPEN, RpcMetadata.STREAM_UPLOAD, "true"),
                codec.encodeArguments(new Object[0])));
    }

    private static byte[] next(String id, long seq, int request) {
        return next("range", id, seq, request);
    }

    private static byte[] next(String method, String id, long seq, int request) {
        return EnvelopeCodec.encodeRequest("numbers", method, "json", Map.of(RpcMetadata.STREAM, RpcMetadata.STREAM_NEXT,
                RpcMetadata.STREAM_ID, id, RpcMetadata.STREAM_REQUEST, Integer.toString(request),
                RpcMetadata.STREAM_SEQ, Long.toString(seq)), new byte[0]);
    }

    private byte[] push(String id, long seq, List<Integer> items, boolean end) {
        Map<String, String> metadata = new LinkedHashMap<>();
        metadata.put(RpcMetadata.STREAM, RpcMetadata.STREAM_PUSH);
        metadata.put(RpcMetadata.STREAM_ID, id);
        metadata.put(RpcMetadata.STREAM_SEQ, Long.toString(seq));
        if (end) {
            metadata.put(RpcMetadata.STREAM_END, "true");
        }
        List<byte[]> frames = new ArrayList<>();
        for (Integer item : items) {
            frames.add(codec.encode(item));
        }
        return EnvelopeCodec.encodeRequest("numbers", "collect", "json", metadata, FrameCodec.encodeFrames(frames));
    }

    private static List<String> items(RpcEnvelope.Response response) {
        return FrameCodec.decodeFrames(response.payload()).stream()
                .map(bytes -> new String(bytes, StandardCharsets.UTF_8))
                .toList();
    }

    private static void await(AtomicReference<?> answer) {
        org.awaitility.Awaitility.await().atMost(TIMEOUT).until(() -> answer.get() != null);
    }

    /**
     * An in-memory transport to {@link #dispatcher} that reorders the numbered stream RPCs in pairs:
     * it holds batch RPC (or push) 1 until 2 comes (for at most 50 ms), hands 2 to the server
     * first (which must hold it until 1 comes), then 1, and completes 2 before 1 at the client
     * (which must emit 1's items first); likewise 3 and 4, and so on.
     */
    private final class ReorderingTransport extends HomaTransport {
        private final Map<String, Held> waitingForPartner = new HashMap<>();
        private final Map<String, AtomicInteger> swaps = new java.util.concurrent.ConcurrentHashMap<>();
        private final AtomicLong rpcIds = new AtomicLong();
        /** Applied to the stream RPCs' answers (not the cancels') on their way to the client. */
        volatile java.util.function.UnaryOperator<byte[]> rewrite = java.util.function.UnaryOperator.identity();

        private record Held(byte[] request, MonoSink<byte[]> sink) {}

        int swapped(String phase) {
            return swaps.getOrDefault(phase, new AtomicInteger()).get();
        }

        @Override
        public Mono<byte[]> call(InetSocketAddress address, byte[] request) {
            return Mono.create(sink -> {
                Map<String, String> metadata = EnvelopeCodec.decodeRequest(request).metadata();
                String phase = metadata.get(RpcMetadata.STREAM);
                String seq = metadata.get(RpcMetadata.STREAM_SEQ);
                if (seq == null) {
                    Mono<byte[]> response = dispatch(request);
                    answer(RpcMetadata.STREAM_CANCEL.equals(phase) ? response : response.map(rewrite), sink);
                    return;
                }
                long number = Long.parseLong(seq);
                String pair = phase + ":" + metadata.get(RpcMetadata.STREAM_ID) + ":" + (number + 1) / 2;
                Held earlier;
                synchronized (this) {
                    earlier = waitingForPartner.remove(pair);
                    if (earlier == null && number % 2 == 1) {
                        Held held = new Held(request, sink);
                        waitingForPartner.put(pair, held);
                        Schedulers.parallel().schedule(() -> release(pair, held), 50, TimeUnit.MILLISECONDS);
                        return;
                    }
                }
                if (earlier == null) {
                    answer(dispatch(request), sink);
                    return;
                }
                swaps.computeIfAbsent(phase, key -> new AtomicInteger()).incrementAndGet();
                Mono<byte[]> later = dispatch(request).cache();
                later.subscribe(bytes -> {}, error -> {});
                Mono<byte[]> first = dispatch(earlier.request).cache();
                first.subscribe(bytes -> {}, error -> {});
                Mono.zip(later, first).publishOn(Schedulers.parallel()).subscribe(both -> {
                    sink.success(both.getT1());
                    earlier.sink.success(both.getT2());
                }, error -> {
                    sink.error(error);
                    earlier.sink.error(error);
                });
            });
        }

        /** A held RPC whose partner did not come in time goes on alone. */
        private void release(String pair, Held held) {
            synchronized (this) {
                if (waitingForPartner.get(pair) != held) {
                    return;
                }
                waitingForPartner.remove(pair);
            }
            answer(dispatch(held.request), held.sink);
        }

        private void answer(Mono<byte[]> response, MonoSink<byte[]> sink) {
            response.publishOn(Schedulers.parallel()).subscribe(sink::success, sink::error);
        }

        /** How long answers that end a stream (batch RPCs, not pushes) are held before they reach the client. */
        volatile Duration holdEnds = Duration.ZERO;

        /** The dispatcher's answer, handled on the server's loop. */
        private Mono<byte[]> dispatch(byte[] request) {
            Duration hold = holdEnds;
            Mono<byte[]> answer = handled(request);
            if (hold.isZero() || RpcMetadata.STREAM_PUSH.equals(
                    EnvelopeCodec.decodeRequest(request).metadata().get(RpcMetadata.STREAM))) {
                return answer;
            }
            return answer.flatMap(bytes -> "true".equals(EnvelopeCodec.decodeResponse(bytes).metadata()
                    .get(RpcMetadata.STREAM_END)) ? Mono.just(bytes).delayElement(hold) : Mono.just(bytes));
        }

        private Mono<byte[]> handled(byte[] request) {
            return Mono.defer(() -> dispatcher.handle(
                            new HomaRequest(CLIENT, rpcIds.incrementAndGet(), Unpooled.wrappedBuffer(request))))
                    .subscribeOn(serverLoop)
                    .map(response -> {
                        try {
                            return ByteBufUtil.getBytes(response);
                        } finally {
                            response.release();
                        }
                    });
        }

        @Override
        public Mono<io.netty.buffer.ByteBuf> call(InetSocketAddress server, io.netty.buffer.ByteBuf request) {
            byte[] bytes = ByteBufUtil.getBytes(request);
            request.release();
            return call(server, bytes).map(Unpooled::wrappedBuffer);
        }

        @Override
        public void startServing() {
        }

        @Override
        public boolean isServing() {
            return true;
        }

        @Override
        public InetSocketAddress localAddress() {
            return CLIENT;
        }

        @Override
        public Mono<EngineCounters> counters() {
            return Mono.empty();
        }

        @Override
        public long droppedDatagrams() {
            return 0;
        }

        @Override
        public void dispose() {
        }

        @Override
        public void disposeNow(Duration timeout) {
        }

        @Override
        public Mono<Void> onDispose() {
            return Mono.empty();
        }
    }

    private RpcEnvelope.Response handle(byte[] envelope) {
        RpcEnvelope.Response response = handleLater(envelope).block(TIMEOUT);
        assertThat(response).isNotNull();
        return response;
    }

    private Mono<RpcEnvelope.Response> handleLater(byte[] envelope) {
        return dispatcher.handle(new HomaRequest(CLIENT, 2, Unpooled.wrappedBuffer(envelope))).map(response -> {
            try {
                return EnvelopeCodec.decodeResponse(ByteBufUtil.getBytes(response));
            } finally {
                response.release();
            }
        });
    }
}
