package io.homa.spring.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import io.homa.reactive.rpc.CallOptions;
import io.homa.reactive.rpc.HomaClientInterceptor;
import io.homa.reactive.rpc.RpcCall;
import io.homa.spring.HomaAutoConfiguration;
import io.homa.spring.HomaMethod;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What a declarative client hands to {@code HomaClient}: the calls are recorded by an interceptor
 * that answers them itself, so no server is needed.
 */
class HomaServiceProxyFactoryTests {

    private static final Duration WAIT = Duration.ofSeconds(5);

    private final Recorder recorder = new Recorder();

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class))
            .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1")
            .withBean(HomaClientInterceptor.class, () -> this.recorder);

    @Test
    void shouldTakeTimeoutCodecAndIdempotenceFromTheAnnotations() {
        this.contextRunner.run(withFactory((factory) -> {
            KvClient kv = factory.createClient(KvClient.class);
            kv.get("k").block(WAIT);
            RpcCall call = this.recorder.last();
            assertThat(call.service()).isEqualTo("kv");
            assertThat(call.method()).isEqualTo("get");
            assertThat(call.arguments()).containsExactly("k");
            assertThat(call.streaming()).isFalse();
            assertThat(call.options()).isEqualTo(new CallOptions(Duration.ofSeconds(5), false, "smile", java.util.Map.of()));

            kv.fetch().block(WAIT);
            assertThat(this.recorder.last().method()).isEqualTo("read");
            assertThat(this.recorder.last().options().timeout()).isEqualTo(Duration.ofMillis(700));
            assertThat(this.recorder.last().options().idempotent()).isTrue();

            BareClient bare = factory.createClient(BareClient.class);
            bare.call().block(WAIT);
            assertThat(this.recorder.last().options()).isEqualTo(CallOptions.defaults());
        }));
    }

    @Test
    void shouldLetYmlOverrideTheAnnotationsMethodFirst() {
        this.contextRunner
                .withPropertyValues("homa.client.services.kv.timeout=2s", "homa.client.services.kv.codec=cbor",
                        "homa.client.services.kv.methods.read.timeout=300ms",
                        "homa.client.services.bare.methods.call.timeout=0")
                .run(withFactory((factory) -> {
                    KvClient kv = factory.createClient(KvClient.class);
                    kv.get("k").block(WAIT);
                    assertThat(this.recorder.last().options().timeout()).isEqualTo(Duration.ofSeconds(2));
                    assertThat(this.recorder.last().options().codec()).isEqualTo("cbor");
                    kv.fetch().block(WAIT);
                    assertThat(this.recorder.last().options().timeout()).isEqualTo(Duration.ofMillis(300));
                    assertThat(this.recorder.last().options().idempotent()).isTrue();
                    factory.createClient(BareClient.class).call().block(WAIT);
                    assertThat(this.recorder.last().options().timeout()).isZero();
                    assertThat(factory.callOptions("kv", "read", true)).isEqualTo(
                            new CallOptions(Duration.ofMillis(300), true, "cbor", java.util.Map.of()));
                }));
    }

    @Test
    void shouldAdaptEachReturnType() {
        this.contextRunner.run(withFactory((factory) -> {
            KvClient kv = factory.createClient(KvClient.class);
            assertThat(kv.scan("a", 3).collectList().block(WAIT)).isEmpty();
            assertThat(this.recorder.last().streaming()).isTrue();
            assertThat(this.recorder.last().arguments()).containsExactly("a", 3);
            assertThat(this.recorder.last().responseType()).isEqualTo(String.class);
            assertThat(kv.size()).isNull();
            kv.clear();
            assertThat(this.recorder.last().method()).isEqualTo("clear");
            assertThat(this.recorder.last().arguments()).isEmpty();
            assertThat(kv.later("x").join()).isNull();
            assertThatIllegalStateException().isThrownBy(kv::count)
                    .withMessageContaining("kv.count returned no value for the primitive result type int");
        }));
    }

    @Test
    void shouldRunDefaultMethodsAndAnswerObjectMethodsLocally() {
        this.contextRunner.run(withFactory((factory) -> {
            KvClient kv = factory.createClient(KvClient.class);
            KvClient other = factory.createClient(KvClient.class);
            int before = this.recorder.calls.size();
            assertThat(kv.toString()).isEqualTo("HomaExchange client " + KvClient.class.getName() + " of service 'kv'");
            assertThat(kv).isEqualTo(kv).isNotEqualTo(other);
            assertThat(kv.hashCode()).isEqualTo(System.identityHashCode(kv));
            assertThat(this.recorder.calls).hasSize(before);
            assertThat(kv.getOrDefault("k").block(WAIT)).isEqualTo("default");
            assertThat(this.recorder.last().method()).isEqualTo("get");
        }));
    }

    @Test
    void shouldRejectBrokenClientInterfaces() {
        this.contextRunner.run(withFactory((factory) -> {
            assertThatIllegalStateException().isThrownBy(() -> factory.createClient(BadTimeout.class))
                    .withMessageContaining("@HomaMethod(timeout) of BadTimeout.call is 'soon'");
            assertThatIllegalStateException().isThrownBy(() -> factory.createClient(BadCodec.class))
                    .withMessageContaining("@HomaExchange(codec = \"xml\")")
                    .withMessageContaining("json, smile, cbor");
            assertThatIllegalStateException().isThrownBy(() -> factory.createClient(BadReturnType.class))
                    .withMessageContaining("BadReturnType.call returns Publisher");
            assertThatIllegalStateException().isThrownBy(() -> factory.createClient(NoService.class))
                    .withMessageContaining("must name the service");
            assertThatIllegalStateException().isThrownBy(() -> factory.createClient(RawMono.class))
                    .withMessageContaining("must declare the element type");
            assertThatIllegalStateException().isThrownBy(() -> factory.createClient(BlockingChannel.class))
                    .withMessageContaining("BlockingChannel.sum takes a request stream (a Flux parameter), so it must"
                            + " return Mono<T> (client streaming) or Flux<T> (bidirectional streaming), not int");
            assertThatIllegalStateException().isThrownBy(() -> factory.createClient(TwoStreams.class))
                    .withMessageContaining("TwoStreams.zip has 2 Flux parameters");
            assertThatIllegalStateException().isThrownBy(() -> factory.createClient(MonoParameter.class))
                    .withMessageContaining("MonoParameter.echo has a Mono parameter");
        }));
    }

    private static ContextConsumer<AssertableApplicationContext> withFactory(Consumer<HomaServiceProxyFactory> test) {
        return (context) -> {
            assertThat(context).hasNotFailed();
            test.accept(context.getBean(HomaServiceProxyFactory.class));
        };
    }

    @HomaExchange(service = "kv", timeout = "5s", codec = "smile")
    interface KvClient {

        Mono<String> get(String key);

        @HomaMethod(name = "read", timeout = "700ms", idempotent = true)
        Mono<String> fetch();

        Flux<String> scan(String prefix, int limit);

        String size();

        int count();

        void clear();

        CompletableFuture<String> later(String key);

        default Mono<String> getOrDefault(String key) {
            return get(key).defaultIfEmpty("default");
        }
    }

    @HomaExchange("bare")
    interface BareClient {

        Mono<String> call();
    }

    @HomaExchange("bad")
    interface BadTimeout {

        @HomaMethod(timeout = "soon")
        Mono<String> call();
    }

    @HomaExchange(service = "bad", codec = "xml")
    interface BadCodec {

        Mono<String> call();
    }

    @HomaExchange("bad")
    interface BadReturnType {

        Publisher<String> call();
    }

    @HomaExchange
    interface NoService {

        Mono<String> call();
    }

    @HomaExchange("bad")
    interface BlockingChannel {

        int sum(Flux<Integer> numbers);
    }

    @HomaExchange("bad")
    interface TwoStreams {

        Flux<String> zip(Flux<String> left, Flux<String> right);
    }

    @HomaExchange("bad")
    interface MonoParameter {

        Mono<String> echo(Mono<String> value);
    }

    @HomaExchange("bad")
    @SuppressWarnings("rawtypes")
    interface RawMono {

        Mono call();
    }

    /** Records each call and answers it empty, without sending anything. */
    static final class Recorder implements HomaClientInterceptor {

        final List<RpcCall> calls = new CopyOnWriteArrayList<>();

        RpcCall last() {
            assertThat(this.calls).isNotEmpty();
            return this.calls.get(this.calls.size() - 1);
        }

        @Override
        public <T> Mono<T> interceptUnary(RpcCall call, Mono<T> next) {
            return Mono.defer(() -> {
                this.calls.add(call);
                return Mono.empty();
            });
        }

        @Override
        public <T> Flux<T> interceptStream(RpcCall call, Flux<T> next) {
            return Flux.defer(() -> {
                this.calls.add(call);
                return Flux.empty();
            });
        }
    }
}
