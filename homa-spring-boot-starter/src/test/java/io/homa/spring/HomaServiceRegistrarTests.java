package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import java.lang.reflect.ParameterizedType;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.annotation.AnnotatedElementUtils;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

class HomaServiceRegistrarTests {

    private static final Duration WAIT = Duration.ofSeconds(5);

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class))
            // (reflection, on by default on loopback, would add homa.reflection.list to the dispatcher)
            .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1",
                    "homa.server.reflection.enabled=false");

    @Test
    void shouldRegisterEveryPublicMethodDeclaredByAHomaServiceBean() {
        this.contextRunner.withUserConfiguration(GreeterService.class).run((context) -> {
            assertThat(context).hasNotFailed();
            Collection<RpcMethod> registered = context.getBean(RpcDispatcher.class).methods();
            assertThat(registered).extracting(RpcMethod::service).containsOnly("GreeterService");
            assertThat(registered).extracting(RpcMethod::method)
                    .containsExactlyInAnyOrder("add", "fail", "greet", "greetAsync", "ping", "reset", "total");
        });
    }

    @Test
    void shouldUseTheAnnotationNameAsServiceName() {
        this.contextRunner.withUserConfiguration(NamedService.class).run((context) -> {
            assertThat(context.getBean(RpcDispatcher.class).methods())
                    .extracting(RpcMethod::service, RpcMethod::method)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("Calc", "negate"));
            assertThat(context).hasBean("Calc");
        });
    }

    @Test
    void shouldNotRegisterAnythingWhenServerIsDisabled() {
        this.contextRunner.withPropertyValues("homa.server.enabled=false")
                .withUserConfiguration(GreeterService.class)
                .run((context) -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(RpcDispatcher.class).methods()).isEmpty();
                });
    }

    @Test
    void shouldExportMethodsWithSeveralParameters() {
        Map<String, RpcMethod> methods = methodsOf(new TwoParameterService());
        assertThat(methods.get("add").argumentTypes()).containsExactly(int.class, int.class);
        assertThat(invoke(methods.get("add"), 20, 22)).isEqualTo(42);
        assertThat(methods.get("join").argumentTypes()).hasSize(3);
        assertThat(invoke(methods.get("join"), new Person("Ada"), List.of(new Item(1), new Item(2)), "!"))
                .isEqualTo("Ada:3!");
        assertThatThrownBy(() -> invoke(methods.get("add"), 1, null))
                .isInstanceOfSatisfying(HomaException.class,
                        (ex) -> assertThat(ex.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT))
                .hasMessageContaining("TwoParameterService.add needs an argument of type int at position 1");
    }

    @Test
    void shouldRenameAndMarkIdempotentWithHomaMethod() {
        Map<String, RpcMethod> methods = methodsOf(new AnnotatedService());
        assertThat(methods.keySet()).containsExactly("fetch", "store");
        assertThat(methods.get("fetch").idempotent()).isTrue();
        assertThat(methods.get("store").idempotent()).isFalse();
        assertThat(invoke(methods.get("fetch"), "k")).isEqualTo("value of k");
    }

    @Test
    void shouldFailStartUpWhenARenameCollides() {
        assertThatIllegalStateException().isThrownBy(() -> methodsOf(new CollidingService()))
                .withMessageContaining("both as 'get'")
                .withMessageContaining("CollidingService.get()")
                .withMessageContaining("CollidingService.fetch()");
    }

    @Test
    void shouldFailStartUpOnOverloadedMethods() {
        this.contextRunner.withUserConfiguration(OverloadedService.class).run((context) -> {
            assertThat(context).hasFailed();
            assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                    .hasMessageContaining("overloaded methods")
                    .hasMessageContaining("OverloadedService.echo(");
        });
    }

    @Test
    void shouldFailStartUpOnDuplicateServiceNames() {
        this.contextRunner.withBean("calcOne", NamedService.class).withBean("calcTwo", AnotherCalc.class).run((context) -> {
            assertThat(context).hasFailed();
            assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                    .hasMessageContaining("Homa service name 'Calc' is exported by both");
        });
    }

    @Test
    void shouldExposeArgumentTypesIncludingGenerics() {
        Map<String, RpcMethod> methods = methodsOf(new GreeterService());
        assertThat(methods.get("greet").argumentType()).isEqualTo(Person.class);
        assertThat(methods.get("ping").argumentType()).isNull();
        assertThat(methods.get("total").argumentType()).isInstanceOfSatisfying(ParameterizedType.class,
                (type) -> {
                    assertThat(type.getRawType()).isEqualTo(List.class);
                    assertThat(type.getActualTypeArguments()).containsExactly(Item.class);
                });
    }

    @Test
    void shouldPassMonoResultsThrough() {
        Map<String, RpcMethod> methods = methodsOf(new GreeterService());
        assertThat(invoke(methods.get("greetAsync"), new Person("Ada")))
                .isEqualTo(new Greeting("Hello, Ada"));
    }

    @Test
    void shouldMarkPlainMethodsBlockingAndReactiveOnesNot() {
        Map<String, RpcMethod> methods = methodsOf(new GreeterService());
        assertThat(methods.get("greet").blocking()).isTrue();
        assertThat(methods.get("reset").blocking()).isTrue();
        assertThat(methods.get("greetAsync").blocking()).isFalse();
    }

    @Test
    void shouldRunPlainMethodsOnlyWhenSubscribed() {
        GreeterService service = new GreeterService();
        Map<String, RpcMethod> methods = methodsOf(service);
        Mono<?> result = Mono.from(methods.get("greet").invoker().apply(new Object[] {new Person("Ada")}));
        assertThat(service.calls).hasValue(0);
        String thread = Mono.from(result).subscribeOn(Schedulers.single()).map((greeting) -> service.lastThread)
                .block(WAIT);
        assertThat(service.calls).hasValue(1);
        assertThat(thread).startsWith("single-");
    }

    @Test
    void shouldAdaptPlainVoidAndNoArgumentMethods() {
        GreeterService service = new GreeterService();
        Map<String, RpcMethod> methods = methodsOf(service);
        assertThat(invoke(methods.get("add"), new Pair(2, 3))).isEqualTo(5);
        assertThat(invoke(methods.get("ping"))).isEqualTo("pong");
        assertThat(Mono.from(methods.get("reset").invoker().apply(new Object[0])).hasElement().block(WAIT)).isFalse();
        assertThat(service.calls).hasValue(-1);
        assertThat(invoke(methods.get("total"), List.of(new Item(2), new Item(5)))).isEqualTo(7L);
    }

    @Test
    void shouldSurfaceTheMethodsOwnException() {
        Map<String, RpcMethod> methods = methodsOf(new GreeterService());
        Mono<?> result = Mono.from(methods.get("fail").invoker().apply(new Object[] {"boom"}));
        assertThatThrownBy(() -> result.block(WAIT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("boom");
    }

    @Test
    void shouldRejectAMissingPrimitiveArgumentAsInvalid() {
        Mono<?> result = Mono.from(methodsOf(new NamedService()).get("negate").invoker().apply(new Object[] {null}));
        assertThatThrownBy(() -> result.block(WAIT)).isInstanceOfSatisfying(HomaException.class,
                (ex) -> assertThat(ex.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT))
                .hasMessageContaining("Calc.negate needs an argument of type int");
    }

    @Test
    void shouldAdaptCompletionStages() {
        Map<String, RpcMethod> methods = methodsOf(new FutureService());
        assertThat(invoke(methods.get("later"), 4)).isEqualTo(8);
    }

    @Test
    void shouldExportOnlyOwnPublicInstanceMethods() {
        assertThat(methodsOf(new ExtendedService()).keySet()).containsExactly("own");
    }

    @Test
    void shouldExportFluxMethodsAsStreams() {
        Map<String, RpcMethod> methods = methodsOf(new FluxService());
        assertThat(methods.get("stream").kind()).isEqualTo(RpcMethod.Kind.STREAM);
        List<Object> items = Flux.from(methods.get("stream").invoker().apply(new Object[] {3}))
                .map(Object.class::cast).collectList().block(WAIT);
        assertThat(items).containsExactly("a0", "a1", "a2");
        assertThat(methodsOf(new GreeterService()).get("greetAsync").kind()).isEqualTo(RpcMethod.Kind.UNARY);
        assertThat(methodsOf(new GreeterService()).get("greet").kind()).isEqualTo(RpcMethod.Kind.UNARY);
    }

    @Test
    void shouldExportFluxParametersAsRequestStreams() {
        Map<String, RpcMethod> methods = methodsOf(new ChannelService());
        assertThat(methods.get("sum").kind()).isEqualTo(RpcMethod.Kind.CLIENT_STREAM);
        assertThat(methods.get("sum").requestStreamIndex()).isZero();
        assertThat(methods.get("sum").requestElementType()).isEqualTo(Integer.class);
        assertThat(methods.get("tag").kind()).isEqualTo(RpcMethod.Kind.BIDI_STREAM);
        assertThat(methods.get("tag").requestStreamIndex()).isEqualTo(1);
        assertThat(methods.get("tag").requestElementType()).isEqualTo(String.class);
        Object sum = Mono.from(methods.get("sum").invoker().apply(new Object[] {Flux.just(1, 2, 3)})).block(WAIT);
        assertThat(sum).isEqualTo(6);
    }

    @Test
    void shouldFailStartUpOnRequestStreamsItCannotServe() {
        assertThatIllegalStateException().isThrownBy(() -> methodsOf(new PlainChannelService()))
                .withMessageContaining("PlainChannelService.sum(Flux)")
                .withMessageContaining("must return Mono<T> (client streaming) or Flux<T> (bidirectional streaming)");
        assertThatIllegalStateException().isThrownBy(() -> methodsOf(new TwoStreamsService()))
                .withMessageContaining("more than one Flux parameter");
        assertThatIllegalStateException().isThrownBy(() -> methodsOf(new MonoParameterService()))
                .withMessageContaining("has a Mono parameter; a request stream is declared as Flux<T>");
    }

    @HomaService("channels")
    static class ChannelService {
        public Mono<Integer> sum(Flux<Integer> numbers) {
            return numbers.reduce(0, Integer::sum);
        }

        public Flux<String> tag(String tag, Flux<String> words) {
            return words.map((word) -> tag + word);
        }
    }

    @HomaService("plainChannel")
    static class PlainChannelService {
        public int sum(Flux<Integer> numbers) {
            return 0;
        }
    }

    @HomaService("twoStreams")
    static class TwoStreamsService {
        public Flux<String> zip(Flux<String> left, Flux<String> right) {
            return left;
        }
    }

    @HomaService("monoParameter")
    static class MonoParameterService {
        public Mono<String> echo(Mono<String> value) {
            return value;
        }
    }

    @Test
    void shouldNotExportExceptionHandlers() {
        assertThat(methodsOf(new HandlingService()).keySet()).containsExactly("work");
    }

    @Test
    void shouldExportOnlyHomaMethodsWhenNotExportingAll() {
        assertThat(methodsOf(new ExplicitService()).keySet()).containsExactly("lookup", "store");
    }

    @HomaService(name = "explicit", exportAll = false)
    static class ExplicitService {
        @HomaMethod
        public String lookup(String key) {
            return helper(key);
        }

        @HomaMethod(name = "store")
        public void put(String key) {
        }

        /** Public for the application's own use: not an RPC. */
        public String helper(String key) {
            return "v:" + key;
        }
    }

    private static Map<String, RpcMethod> methodsOf(Object bean) {
        String service = HomaServiceRegistrar.serviceName(
                AnnotatedElementUtils.findMergedAnnotation(bean.getClass(), HomaService.class),
                bean.getClass());
        return HomaServiceRegistrar.rpcMethods(service, bean, bean.getClass()).stream()
                .collect(Collectors.toMap(RpcMethod::method, Function.identity(), (a, b) -> a,
                        java.util.LinkedHashMap::new));
    }

    private static Object invoke(RpcMethod method, Object... arguments) {
        return Mono.from(method.invoker().apply(arguments)).block(WAIT);
    }

    record Person(String name) {
    }

    record Greeting(String text) {
    }

    record Pair(int left, int right) {
    }

    record Item(long amount) {
    }

    @HomaService
    static class GreeterService implements InitializingBean {

        final AtomicInteger calls = new AtomicInteger();

        volatile String lastThread;

        public Greeting greet(Person person) {
            this.calls.incrementAndGet();
            this.lastThread = Thread.currentThread().getName();
            return new Greeting("Hello, " + person.name());
        }

        public Mono<Greeting> greetAsync(Person person) {
            return Mono.just(new Greeting("Hello, " + person.name()));
        }

        public int add(Pair pair) {
            return pair.left() + pair.right();
        }

        public String ping() {
            return "pong";
        }

        public void reset() {
            this.calls.set(-1);
        }

        public long total(List<Item> items) {
            return items.stream().mapToLong(Item::amount).sum();
        }

        public void fail(String message) {
            throw new IllegalArgumentException(message);
        }

        String notPublic() {
            return "hidden";
        }

        public static String notInstance() {
            return "hidden";
        }

        @Override
        public String toString() {
            return "GreeterService";
        }

        @Override
        public void afterPropertiesSet() {
        }
    }

    @HomaService("Calc")
    static class NamedService {

        public int negate(int value) {
            return -value;
        }
    }

    @HomaService(name = "Calc")
    static class AnotherCalc {

        public int square(int value) {
            return value * value;
        }
    }

    @HomaService
    static class TwoParameterService {

        public int add(int left, int right) {
            return left + right;
        }

        public String join(Person person, List<Item> items, String suffix) {
            return person.name() + ":" + items.stream().mapToLong(Item::amount).sum() + suffix;
        }
    }

    @HomaService
    static class AnnotatedService {

        @HomaMethod(name = "fetch", idempotent = true)
        public String get(String key) {
            return "value of " + key;
        }

        @HomaMethod
        public void store(String key) {
        }
    }

    @HomaService
    static class CollidingService {

        public String get() {
            return "a";
        }

        @HomaMethod("get")
        public String fetch() {
            return "b";
        }
    }

    @HomaService
    static class HandlingService {

        public String work() {
            return "done";
        }

        @HomaExceptionHandler
        public HomaStatus onIllegalState(IllegalStateException ex) {
            return HomaStatus.FAILED_PRECONDITION;
        }
    }

    @HomaService
    static class OverloadedService {

        public String echo(String value) {
            return value;
        }

        public String echo(Person value) {
            return value.name();
        }
    }

    @HomaService
    static class FutureService {

        public CompletionStage<Integer> later(int value) {
            return CompletableFuture.supplyAsync(() -> value * 2);
        }
    }

    @HomaService
    static class FluxService {

        public Flux<String> stream(int count) {
            return Flux.range(0, count).map((i) -> "a" + i);
        }
    }

    static class BaseService {

        public String inherited() {
            return "base";
        }
    }

    @HomaService
    static class ExtendedService extends BaseService {

        public String own() {
            return "own";
        }
    }
}
