package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRequest;
import io.homa.reactive.HomaStatus;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
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
    void shouldRunMethodOnTheSchedulerWithNullArgumentWhenMethodTakesNone() {
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
        assertThat(thread.get()).startsWith("rpc-test");
        assertThat(argument.get()).isNull();
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
        RpcEnvelope.Response malformed = handle(new byte[] {1, 0, 0, 9, 'x'});
        RpcEnvelope.Response foreignCodec =
                handle(RpcEnvelope.encodeRequest("calc", "add", "cbor", codec.encode(new Sum(1, 1))));

        assertThat(malformed.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(malformed.message()).startsWith("malformed request envelope");
        assertThat(foreignCodec.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT);
        assertThat(foreignCodec.message()).contains("codec 'cbor' is not supported");
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

    private RpcEnvelope.Response call(String service, String method, byte[] payload) {
        return handle(RpcEnvelope.encodeRequest(service, method, codec.name(), payload));
    }

    private RpcEnvelope.Response handle(byte[] envelope) {
        ByteBuf response = dispatcher.handle(new HomaRequest(CLIENT, 2, Unpooled.wrappedBuffer(envelope)))
                .block(Duration.ofSeconds(5));
        assertThat(response).isNotNull();
        try {
            return RpcEnvelope.decodeResponse(ByteBufUtil.getBytes(response));
        } finally {
            response.release();
        }
    }
}
