package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRequest;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.internal.rpc.EnvelopeCodec;
import io.homa.reactive.internal.rpc.FrameCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

class RpcDispatcherTest {
    record Sum(int a, int b) {}

    private static final InetSocketAddress CLIENT = new InetSocketAddress("127.0.0.1", 40000);

    private final Scheduler scheduler = Schedulers.newSingle("rpc-test");
    private final JsonPayloadCodec codec = new JsonPayloadCodec();
    private final RpcDispatcher dispatcher = new RpcDispatcher(codec, scheduler)
            .register(new RpcMethod("calc", "add", Sum.class, arg -> {
                Sum sum = (Sum) arg;
                return Mono.just(sum.a() + sum.b());
            }));

    @AfterEach
    void disposeScheduler() {
        scheduler.dispose();
    }

    @Test
    void shouldAnswerOkWithEncodedResult() {
        RpcEnvelope.Response response = call("calc", "add", codec.encode(new Sum(2, 40)));

        assertThat(response.status()).isEqualTo(HomaStatus.OK);
        assertThat(response.message()).isEmpty();
        assertThat(new String(response.payload(), StandardCharsets.UTF_8)).isEqualTo("42");
    }

    @Test
    void shouldRunANonBlockingMethodOnTheDeliveringThreadWithNullArgumentWhenMethodTakesNone() {
        AtomicReference<String> thread = new AtomicReference<>();
        AtomicReference<Object> argument = new AtomicReference<>("unset");
        dispatcher.register(new RpcMethod("calc", "now", null, arg -> {
            thread.set(Thread.currentThread().getName());
            argument.set(arg);
            return Mono.just("tick");
        }));

        RpcEnvelope.Response response = call("calc", "now", codec.encode(null));

        assertThat(response.status()).isEqualTo(HomaStatus.OK);
        assertThat(new String(response.payload(), StandardCharsets.UTF_8)).isEqualTo("\"tick\"");
        assertThat(thread.get()).as("no thread hop").isEqualTo(Thread.currentThread().getName());
        assertThat(argument.get()).isNull();
    }

    @Test
    void shouldAnswerAReadyResultAtOnceAndALaterOneWithTheCallContext() {
        dispatcher.register(new RpcMethod("calc", "who", null, arg -> HomaCallContext.current()
                .delayElement(Duration.ofMillis(20))
                .map(context -> context.service() + "." + context.method() + " from " + context.peer().getPort())));
        HomaRequest ready = new HomaRequest(CLIENT, 2,
                Unpooled.wrappedBuffer(EnvelopeCodec.encodeRequest("calc", "add", codec.name(), codec.encode(new Sum(1, 2)))));

        // A method returning Mono.just is answered during the subscription itself, and leaves nothing in flight.
        AtomicReference<ByteBuf> answered = new AtomicReference<>();
        dispatcher.handle(ready).subscribe(answered::set);
        assertThat(answered.get()).as("answered synchronously").isNotNull();
        assertThat(dispatcher.inFlight()).isZero();
        try {
            assertThat(new String(EnvelopeCodec.decodeResponse(ByteBufUtil.getBytes(answered.get())).payload(),
                    StandardCharsets.UTF_8)).isEqualTo("3");
        } finally {
            answered.get().release();
        }

        // A later result still runs with the call's context and counts as in flight until it is answered.
        RpcEnvelope.Response later = call("calc", "who", codec.encode(null));
        assertThat(later.status()).isEqualTo(HomaStatus.OK);
        assertThat(new String(later.payload(), StandardCharsets.UTF_8)).isEqualTo("\"calc.who from 40000\"");
        awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldSendALongByteArrayResultAsItselfBehindTheEnvelope() {
        byte[] result = new byte[64 * 1024];
        java.util.Arrays.fill(result, (byte) 7);
        dispatcher.register(new RpcMethod("calc", "ready", null, arg -> Mono.just(result)));
        dispatcher.register(new RpcMethod("calc", "later", null, arg -> Mono.just(result).delayElement(Duration.ofMillis(1))));
        for (String method : List.of("ready", "later")) {
            ByteBuf message = dispatcher.handle(new HomaRequest(CLIENT, 2, Unpooled.wrappedBuffer(
                    EnvelopeCodec.encodeRequest("calc", method, codec.name(), codec.encode(null))))).block(Duration.ofSeconds(5));
            assertThat(message).isNotNull();
            try {
                // The transport sends a composite's arrays as they are (MessageParts): the result is one of them.
                assertThat(message).as(method).isInstanceOf(io.netty.buffer.CompositeByteBuf.class);
                io.netty.buffer.CompositeByteBuf composite = (io.netty.buffer.CompositeByteBuf) message;
                ByteBuf last = composite.component(composite.numComponents() - 1);
                assertThat(last.array()).as(method + ": the result's own array, not a copy").isSameAs(result);
                RpcEnvelope.Response response = EnvelopeCodec.decodeResponse(ByteBufUtil.getBytes(message));
                assertThat(response.status()).isEqualTo(HomaStatus.OK);
                assertThat(codec.decode(response.payload(), byte[].class)).isEqualTo(result);
            } finally {
                message.release();
            }
        }
    }

    @Test
    void shouldRunABlockingMethodOnTheScheduler() {
        AtomicReference<String> thread = new AtomicReference<>();
        dispatcher.register(new RpcMethod("calc", "now", null, arg -> Mono.fromCallable(() -> {
            thread.set(Thread.currentThread().getName());
            return "tick";
        })).withBlocking(true));

        RpcEnvelope.Response response = call("calc", "now", codec.encode(null));

        assertThat(response.status()).isEqualTo(HomaStatus.OK);
        assertThat(thread.get()).startsWith("rpc-test");
    }

    @Test
    void shouldDecodeAndRunALongRequestOnTheSchedulerWhateverTheMethod() {
        AtomicReference<String> thread = new AtomicReference<>();
        dispatcher.offloadBytes(100).register(new RpcMethod("calc", "length", String.class, arg -> {
            thread.set(Thread.currentThread().getName());
            return Mono.just(((String) arg).length());
        }));

        RpcEnvelope.Response shortOne = call("calc", "length", codec.encode("x".repeat(10)));
        String shortThread = thread.get();
        RpcEnvelope.Response longOne = call("calc", "length", codec.encode("x".repeat(1000)));

        assertThat(shortOne.status()).isEqualTo(HomaStatus.OK);
        assertThat(shortThread).isEqualTo(Thread.currentThread().getName());
        assertThat(new String(longOne.payload(), StandardCharsets.UTF_8)).isEqualTo("1000");
        assertThat(thread.get()).startsWith("rpc-test");
        assertThatThrownBy(() -> dispatcher.offloadBytes(-1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldAnswerResourceExhaustedWhenTheSchedulerRejectsTheCall() {
        Scheduler full = Schedulers.newBoundedElastic(1, 1, "rpc-full");
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        try {
            RpcDispatcher busy = new RpcDispatcher(codec, full).register(new RpcMethod("calc", "wait", null,
                    arg -> Mono.fromCallable(() -> release.await(10, java.util.concurrent.TimeUnit.SECONDS)))
                    .withBlocking(true));
            byte[] envelope = EnvelopeCodec.encodeRequest("calc", "wait", codec.name(), codec.encode(null));
            // While the first call blocks its only thread, at most one more waits in the queue: of
            // five calls at least three find it full (which ones depends on when the thread takes
            // the first task).
            List<Mono<ByteBuf>> calls = new java.util.ArrayList<>();
            for (int i = 0; i < 5; i++) {
                Mono<ByteBuf> call = busy.handle(new HomaRequest(CLIENT, 10 + i, Unpooled.wrappedBuffer(envelope))).cache();
                call.subscribe();
                calls.add(call);
            }
            release.countDown();
            int exhausted = 0;
            int ok = 0;
            for (Mono<ByteBuf> call : calls) {
                ByteBuf bytes = call.block(Duration.ofSeconds(10));
                RpcEnvelope.Response response = EnvelopeCodec.decodeResponse(ByteBufUtil.getBytes(bytes));
                bytes.release();
                if (response.status() == HomaStatus.RESOURCE_EXHAUSTED) {
                    assertThat(response.message()).contains("scheduler is full");
                    exhausted++;
                } else {
                    assertThat(response.status()).isEqualTo(HomaStatus.OK);
                    ok++;
                }
            }
            assertThat(exhausted).isGreaterThanOrEqualTo(3);
            assertThat(ok).isGreaterThanOrEqualTo(1);
        } finally {
            release.countDown();
            full.dispose();
        }
    }

    @Test
    void shouldEncodeEmptyResultAsJsonNull() {
        dispatcher.register(new RpcMethod("calc", "nothing", Sum.class, arg -> Mono.empty()));

        RpcEnvelope.Response response = call("calc", "nothing", codec.encode(new Sum(1, 1)));

        assertThat(response.status()).isEqualTo(HomaStatus.OK);
        assertThat(new String(response.payload(), StandardCharsets.UTF_8)).isEqualTo("null");
    }

    @Test
    void shouldAnswerUnimplementedNamingServiceAndMethod() {
        RpcEnvelope.Response unknownMethod = call("calc", "sub", codec.encode(new Sum(1, 1)));
        RpcEnvelope.Response unknownService = call("nope", "add", codec.encode(new Sum(1, 1)));

        assertThat(unknownMethod.status()).isEqualTo(HomaStatus.UNIMPLEMENTED);
        assertThat(unknownMethod.message()).contains("calc.sub");
        assertThat(unknownMethod.payload()).isEmpty();
        assertThat(unknownService.status()).isEqualTo(HomaStatus.UNIMPLEMENTED);
        assertThat(unknownService.message()).contains("nope.add");
    }

    @Test
    void shouldAnswerInvalidArgumentWhenArgumentDoesNotDecode() {
        RpcEnvelope.Response response = call("calc", "add", "{\"a\": \"x\"".getBytes(StandardCharsets.UTF_8));

        assertThat(response.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(response.message()).startsWith("invalid argument for calc.add: cannot decode JSON");
    }

    @Test
    void shouldAnswerInvalidArgumentForMalformedEnvelopeOrForeignCodec() {
        RpcEnvelope.Response malformed = handle(new byte[] {2, 0, 0, 9, 'x'});
        RpcEnvelope.Response foreignCodec =
                handle(EnvelopeCodec.encodeRequest("calc", "add", "cbor", codec.encode(new Sum(1, 1))));

        assertThat(malformed.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(malformed.message()).startsWith("malformed request envelope");
        assertThat(foreignCodec.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(foreignCodec.message()).isEqualTo("codec 'cbor' is not supported; supported: json");
    }

    @Test
    void shouldAnswerInternalWithTypeAndMessageForThrownOrSignalledExceptions() {
        dispatcher.register(new RpcMethod("calc", "throws", null, arg -> {
            throw new IllegalStateException("boom");
        }));
        dispatcher.register(new RpcMethod("calc", "signals", null,
                arg -> Mono.error(new ArithmeticException("/ by zero"))));
        dispatcher.register(new RpcMethod("calc", "nullMono", null, arg -> null));

        RpcEnvelope.Response thrown = call("calc", "throws", codec.encode(null));
        RpcEnvelope.Response signalled = call("calc", "signals", codec.encode(null));
        RpcEnvelope.Response nullMono = call("calc", "nullMono", codec.encode(null));

        assertThat(thrown.status()).isEqualTo(HomaStatus.INTERNAL);
        assertThat(thrown.message()).isEqualTo("IllegalStateException: boom");
        assertThat(thrown.metadata()).containsEntry(RpcMetadata.ERROR_TYPE, "java.lang.IllegalStateException");
        assertThat(signalled.metadata()).containsEntry(RpcMetadata.ERROR_TYPE, "java.lang.ArithmeticException");
        assertThat(signalled.status()).isEqualTo(HomaStatus.INTERNAL);
        assertThat(signalled.message()).isEqualTo("ArithmeticException: / by zero");
        assertThat(nullMono.status()).isEqualTo(HomaStatus.INTERNAL);
        assertThat(nullMono.message()).startsWith("NullPointerException: invoker of calc.nullMono returned null");
    }

    @Test
    void shouldUseStatusOfHomaException() {
        dispatcher.register(new RpcMethod("kv", "get", String.class,
                key -> Mono.error(new HomaException(HomaStatus.NOT_FOUND, "no key " + key))));

        RpcEnvelope.Response response = call("kv", "get", codec.encode("k1"));

        assertThat(response.status()).isEqualTo(HomaStatus.NOT_FOUND);
        assertThat(response.message()).isEqualTo("no key k1");
    }

    @Test
    void shouldReplaceMethodOnReRegistration() {
        dispatcher.register(new RpcMethod("calc", "add", Sum.class, arg -> Mono.just(-1)));

        RpcEnvelope.Response response = call("calc", "add", codec.encode(new Sum(2, 40)));

        assertThat(new String(response.payload(), StandardCharsets.UTF_8)).isEqualTo("-1");
        assertThat(dispatcher.lookup("calc", "add")).isPresent();
        assertThat(dispatcher.lookup("calc", "mul")).isEmpty();
        assertThat(dispatcher.methods()).hasSize(1);
    }

    @Test
    void shouldAskExceptionMappersInOrderAndSkipFailingOnes() {
        dispatcher.register(new RpcMethod("calc", "fails", String.class, kind -> Mono.error(
                "state".equals(kind) ? new IllegalStateException("closed") : new IllegalArgumentException("bad"))));
        dispatcher.addExceptionMapper(error -> {
                    throw new UnsupportedOperationException("broken mapper");
                })
                .addExceptionMapper(error -> error instanceof IllegalArgumentException
                        ? new HomaException(HomaStatus.OUT_OF_RANGE, "first: " + error.getMessage())
                        : null)
                .addExceptionMapper(error -> new HomaException(HomaStatus.FAILED_PRECONDITION, "second"));

        RpcEnvelope.Response argument = call("calc", "fails", codec.encode("argument"));
        RpcEnvelope.Response state = call("calc", "fails", codec.encode("state"));

        assertThat(argument.status()).isEqualTo(HomaStatus.OUT_OF_RANGE);
        assertThat(argument.message()).isEqualTo("first: bad");
        assertThat(argument.metadata()).containsEntry(RpcMetadata.ERROR_TYPE, "java.lang.IllegalArgumentException");
        assertThat(state.status()).isEqualTo(HomaStatus.FAILED_PRECONDITION);
        assertThat(state.metadata()).containsEntry(RpcMetadata.ERROR_TYPE, "java.lang.IllegalStateException");
    }

    @Test
    void shouldRejectBadDeadlineMetadataAndExpiredDeadlinesWithoutInvoking() {
        AtomicReference<Object> invoked = new AtomicReference<>();
        dispatcher.register(new RpcMethod("calc", "spy", null, arg -> {
            invoked.set("yes");
            return Mono.just(1);
        }));

        RpcEnvelope.Response garbage = handle(EnvelopeCodec.encodeRequest("calc", "spy", "json",
                Map.of(RpcMetadata.TIMEOUT_MS, "soon"), new byte[0]));
        RpcEnvelope.Response negative = handle(EnvelopeCodec.encodeRequest("calc", "spy", "json",
                Map.of(RpcMetadata.TIMEOUT_MS, "-5"), new byte[0]));

        assertThat(garbage.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(garbage.message()).isEqualTo("metadata homa-timeout-ms must be a whole number of milliseconds, was 'soon'");
        assertThat(negative.status()).isEqualTo(HomaStatus.DEADLINE_EXCEEDED);
        assertThat(invoked.get()).isNull();
    }

    @Test
    void shouldServeAStreamInBatchesOfTheRequestedSize() {
        AtomicLong requested = new AtomicLong();
        // The range emits all three at once; a long linger keeps a paused thread (a loaded machine)
        // from sending a partial batch between two of its items.
        dispatcher.streamBatchLinger(Duration.ofSeconds(1));
        dispatcher.register(RpcMethod.stream("calc", "count", new java.lang.reflect.Type[] {int.class},
                args -> Flux.range(0, (Integer) args[0]).doOnRequest(requested::addAndGet)));

        RpcEnvelope.Response first = handle(EnvelopeCodec.encodeRequest("calc", "count", "json",
                Map.of(RpcMetadata.STREAM, "open", RpcMetadata.STREAM_REQUEST, "3"), codec.encode(5)));
        String id = first.metadata().get(RpcMetadata.STREAM_ID);
        RpcEnvelope.Response second = handle(EnvelopeCodec.encodeRequest("calc", "count", "json",
                Map.of(RpcMetadata.STREAM, "next", RpcMetadata.STREAM_ID, id, RpcMetadata.STREAM_REQUEST, "10"),
                new byte[0]));
        RpcEnvelope.Response afterEnd = handle(EnvelopeCodec.encodeRequest("calc", "count", "json",
                Map.of(RpcMetadata.STREAM, "next", RpcMetadata.STREAM_ID, id, RpcMetadata.STREAM_REQUEST, "1"),
                new byte[0]));

        assertThat(first.status()).isEqualTo(HomaStatus.OK);
        assertThat(items(first)).containsExactly("0", "1", "2");
        assertThat(first.metadata()).doesNotContainKey(RpcMetadata.STREAM_END);
        assertThat(items(second)).containsExactly("3", "4");
        assertThat(second.metadata()).containsEntry(RpcMetadata.STREAM_END, "true").containsEntry(RpcMetadata.STREAM_ID, id);
        assertThat(requested).hasValue(3 + 10);
        assertThat(afterEnd.status()).isEqualTo(HomaStatus.NOT_FOUND);
        assertThat(afterEnd.message()).startsWith("no open stream " + id + " of calc.count");
        awaitInFlight(dispatcher, 0);
    }

    @Test
    void shouldBoundStreamBatchesByBytesAndRejectBadStreamMetadata() {
        // A linger far above any pause of this thread: a batch ends because it is full, never because
        // a pause between two items let the linger run out.
        dispatcher.streamBatchBytes(20).streamBatchLinger(Duration.ofSeconds(1))
                .register(RpcMethod.stream("calc", "words", new java.lang.reflect.Type[0],
                        args -> Flux.just("aaaa", "bbbb", "cccc", "x".repeat(30))));

        RpcEnvelope.Response first = handle(EnvelopeCodec.encodeRequest("calc", "words", "json",
                Map.of(RpcMetadata.STREAM, "open", RpcMetadata.STREAM_REQUEST, "10"), new byte[0]));
        String id = first.metadata().get(RpcMetadata.STREAM_ID);
        RpcEnvelope.Response second = handle(EnvelopeCodec.encodeRequest("calc", "words", "json",
                Map.of(RpcMetadata.STREAM, "next", RpcMetadata.STREAM_ID, id, RpcMetadata.STREAM_REQUEST, "10"),
                new byte[0]));
        RpcEnvelope.Response zero = handle(EnvelopeCodec.encodeRequest("calc", "words", "json",
                Map.of(RpcMetadata.STREAM, "open", RpcMetadata.STREAM_REQUEST, "0"), new byte[0]));
        RpcEnvelope.Response phase = handle(EnvelopeCodec.encodeRequest("calc", "words", "json",
                Map.of(RpcMetadata.STREAM, "rewind"), new byte[0]));

        // each JSON string item is 6 bytes plus a 4-byte length: two fit in 20 bytes
        assertThat(items(first)).containsExactly("\"aaaa\"", "\"bbbb\"");
        assertThat(items(second)).containsExactly("\"cccc\"");
        assertThat(second.status()).isEqualTo(HomaStatus.RESOURCE_EXHAUSTED);
        assertThat(second.message()).isEqualTo("an item of calc.words is 32 bytes, more than the stream batch limit of 20 bytes");
        assertThat(zero.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(zero.message()).isEqualTo("metadata homa-stream-request must be 1 to 65536, was '0'");
        assertThat(phase.message()).isEqualTo("metadata homa-stream must be open, next, push or cancel, was 'rewind'");
    }

    @Test
    void shouldCancelAnIdleStream() throws InterruptedException {
        java.util.concurrent.CountDownLatch cancelled = new java.util.concurrent.CountDownLatch(1);
        dispatcher.streamIdleTimeout(Duration.ofMillis(500))
                .register(RpcMethod.stream("calc", "forever", new java.lang.reflect.Type[0],
                        args -> Flux.range(0, Integer.MAX_VALUE).doOnCancel(cancelled::countDown)));

        RpcEnvelope.Response first = handle(EnvelopeCodec.encodeRequest("calc", "forever", "json",
                Map.of(RpcMetadata.STREAM, "open", RpcMetadata.STREAM_REQUEST, "1"), new byte[0]));

        assertThat(items(first)).containsExactly("0");
        awaitInFlight(dispatcher, 1);
        assertThat(cancelled.await(2, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(dispatcher.inFlight()).isZero();
    }

    private static List<String> items(RpcEnvelope.Response response) {
        return FrameCodec.decodeFrames(response.payload()).stream()
                .map(bytes -> new String(bytes, StandardCharsets.UTF_8))
                .toList();
    }

    private RpcEnvelope.Response call(String service, String method, byte[] payload) {
        return handle(EnvelopeCodec.encodeRequest(service, method, codec.name(), payload));
    }

    private RpcEnvelope.Response handle(byte[] envelope) {
        ByteBuf response = dispatcher.handle(new HomaRequest(CLIENT, 2, Unpooled.wrappedBuffer(envelope)))
                .block(Duration.ofSeconds(5));
        assertThat(response).isNotNull();
        try {
            return EnvelopeCodec.decodeResponse(ByteBufUtil.getBytes(response));
        } finally {
            response.release();
        }
    }

    /** {@code inFlight} drops just after a response is handed over: wait for it. */
    @Test
    void shouldBeOverloadedWithMaxCallsInServiceAndCountNoReadyCall() throws InterruptedException {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        Scheduler threads = Schedulers.newBoundedElastic(4, 100, "rpc-load");
        try {
            RpcDispatcher loaded = new RpcDispatcher(codec, threads).maxCallsInService(2)
                    .register(new RpcMethod("calc", "add", Sum.class, arg -> Mono.just(1)))
                    .register(new RpcMethod("calc", "hold", null, arg -> Mono.fromCallable(() -> {
                        release.await();
                        return "done";
                    })).withBlocking(true));
            loaded.handle(request("calc", "add", codec.encode(new Sum(1, 2)))).block(Duration.ofSeconds(10));
            assertThat(loaded.callsInService()).as("a ready answer is not in service").isZero();
            assertThat(loaded.overloaded()).isFalse();

            List<reactor.core.Disposable> held = List.of(
                    loaded.handle(request("calc", "hold", codec.encode(null))).subscribe(),
                    loaded.handle(request("calc", "hold", codec.encode(null))).subscribe());
            assertThat(loaded.callsInService()).isEqualTo(2);
            assertThat(loaded.overloaded()).as("two calls in service of at most two").isTrue();

            release.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> loaded.callsInService() == 0);
            assertThat(loaded.overloaded()).isFalse();
            held.forEach(reactor.core.Disposable::dispose);
        } finally {
            threads.dispose();
        }
    }

    @Test
    void shouldBeOverloadedWithMaxBlockingCallsAndCountOnlyBlockingMethods() {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        reactor.core.publisher.Sinks.One<String> downstream = reactor.core.publisher.Sinks.one();
        Scheduler threads = Schedulers.newBoundedElastic(1, 100, "rpc-blocking");
        try {
            RpcDispatcher loaded = new RpcDispatcher(codec, threads).maxBlockingCalls(2)
                    .register(new RpcMethod("calc", "wait", null, arg -> downstream.asMono()))
                    .register(new RpcMethod("calc", "hold", null, arg -> Mono.fromCallable(() -> {
                        release.await();
                        return "done";
                    })).withBlocking(true));
            List<reactor.core.Disposable> held = new java.util.ArrayList<>();
            for (int i = 0; i < 3; i++) {
                held.add(loaded.handle(request("calc", "wait", codec.encode(null))).subscribe());
            }
            assertThat(loaded.callsInService()).isEqualTo(3);
            assertThat(loaded.blockingCalls()).as("a reactive method that waits holds no thread").isZero();
            assertThat(loaded.overloaded()).isFalse();

            held.add(loaded.handle(request("calc", "hold", codec.encode(null))).subscribe());
            assertThat(loaded.blockingCalls()).isEqualTo(1);
            assertThat(loaded.overloaded()).as("one blocking call of at most two").isFalse();
            held.add(loaded.handle(request("calc", "hold", codec.encode(null))).subscribe());
            assertThat(loaded.blockingCalls()).as("one runs, one waits for the one thread").isEqualTo(2);
            assertThat(loaded.overloaded()).as("two blocking calls of at most two").isTrue();

            release.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> loaded.blockingCalls() == 0);
            assertThat(loaded.overloaded()).isFalse();
            downstream.tryEmitValue("late");
            await().atMost(Duration.ofSeconds(10)).until(() -> loaded.callsInService() == 0);
            held.forEach(reactor.core.Disposable::dispose);
        } finally {
            threads.dispose();
        }
    }

    @Test
    void shouldBeOverloadedWhileQueuedWorkWaitsLongerThanMaxQueueDelay() throws InterruptedException {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
        AtomicLong nowNs = new AtomicLong();
        Scheduler oneThread = Schedulers.newBoundedElastic(1, 100, "rpc-queue");
        try {
            RpcDispatcher queued = new RpcDispatcher(codec, oneThread).clock(nowNs::get)
                    .maxQueueDelay(Duration.ofMillis(50))
                    .register(new RpcMethod("calc", "hold", null, arg -> Mono.fromCallable(() -> {
                        running.countDown();
                        release.await();
                        return "done";
                    })).withBlocking(true));
            reactor.core.Disposable first = queued.handle(request("calc", "hold", codec.encode(null))).subscribe();
            assertThat(running.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            reactor.core.Disposable second = queued.handle(request("calc", "hold", codec.encode(null))).subscribe();
            nowNs.addAndGet(Duration.ofMillis(50).toNanos());
            assertThat(queued.overloaded()).as("waited exactly the bound").isFalse();
            nowNs.addAndGet(1);
            assertThat(queued.overloaded()).as("waited longer than the bound for the one thread").isTrue();

            release.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> queued.callsInService() == 0);
            assertThat(queued.overloaded()).as("nothing waits any more").isFalse();
            first.dispose();
            second.dispose();
        } finally {
            oneThread.dispose();
        }
    }

    @Test
    void shouldDeriveTheDefaultBoundFromThreadsAndLoopsAndCheckTheSettings() {
        assertThat(RpcDispatcher.defaultMaxCallsInService(1, 1)).as("the floor").isEqualTo(128);
        assertThat(RpcDispatcher.defaultMaxCallsInService(100, 2)).isEqualTo(408);
        assertThat(RpcDispatcher.defaultMaxCallsInService(10_000, 64)).isEqualTo(40_256);
        assertThat(dispatcher.maxQueueDelay()).isEqualTo(RpcDispatcher.DEFAULT_MAX_QUEUE_DELAY);
        assertThat(RpcDispatcher.defaultMaxBlockingCalls(1)).isEqualTo(4);
        assertThat(RpcDispatcher.defaultMaxBlockingCalls(10_000)).isEqualTo(40_000);
        assertThat(dispatcher.maxBlockingCalls())
                .isEqualTo(RpcDispatcher.defaultMaxBlockingCalls(10 * Runtime.getRuntime().availableProcessors()));
        assertThatThrownBy(() -> RpcDispatcher.defaultMaxBlockingCalls(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("handlerThreads");
        assertThatThrownBy(() -> dispatcher.maxBlockingCalls(1_000_001))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxBlockingCalls must be 1 to 1000000, was 1000001");
        assertThatThrownBy(() -> RpcDispatcher.defaultMaxCallsInService(0, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("handlerThreads");
        assertThatThrownBy(() -> dispatcher.maxCallsInService(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxCallsInService must be 1 to 1000000, was 0");
        assertThatThrownBy(() -> dispatcher.maxQueueDelay(Duration.ofMinutes(2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("maxQueueDelay must be 0 to 1 min, was PT2M");
    }

    private HomaRequest request(String service, String method, byte[] payload) {
        return new HomaRequest(CLIENT, 2, Unpooled.wrappedBuffer(EnvelopeCodec.encodeRequest(service, method, codec.name(), payload)));
    }

    static void awaitInFlight(RpcDispatcher dispatcher, int expected) {
        awaitInFlight(dispatcher, expected, Duration.ofSeconds(10));
    }

    /** As {@link #awaitInFlight(RpcDispatcher, int)}, waiting at most {@code wait}. */
    static void awaitInFlight(RpcDispatcher dispatcher, int expected, Duration wait) {
        await().atMost(wait).pollInterval(Duration.ofMillis(1))
                .untilAsserted(() -> assertThat(dispatcher.inFlight()).isEqualTo(expected));
    }
}
