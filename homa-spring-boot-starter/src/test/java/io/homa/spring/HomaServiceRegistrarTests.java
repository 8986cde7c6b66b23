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
            .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1");

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
    void shouldFailStartUpOnTwoParameterMethod() {
        this.contextRunner.withUserConfiguration(TwoParameterService.class).run((context) -> {
            assertThat(context).hasFailed();
            assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("TwoParameterService.add(int, int)")
                    .hasMessageContaining("zero or one parameter");
        });
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
        assertThat(methods.get("greetAsync").invoker().apply(new Person("Ada")).block(WAIT))
                .isEqualTo(new Greeting("Hello, Ada"));
    }

    @Test
    void shouldRunPlainMethodsOnlyWhenSubscribed() {
        GreeterService service = new GreeterService();
        Map<String, RpcMethod> methods = methodsOf(service);
        Mono<?> result = methods.get("greet").invoker().apply(new Person("Ada"));
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
        assertThat(methods.get("add").invoker().apply(new Pair(2, 3)).block(WAIT)).isEqualTo(5);
        assertThat(methods.get("ping").invoker().apply(null).block(WAIT)).isEqualTo("pong");
        assertThat(methods.get("reset").invoker().apply(null).hasElement().block(WAIT)).isFalse();
        assertThat(service.calls).hasValue(-1);
        assertThat(methods.get("total").invoker().apply(List.of(new Item(2), new Item(5))).block(WAIT))
                .isEqualTo(7L);
    }

    @Test
    void shouldSurfaceTheMethodsOwnException() {
        Map<String, RpcMethod> methods = methodsOf(new GreeterService());
        Mono<?> result = methods.get("fail").invoker().apply("boom");
        assertThatThrownBy(() -> result.block(WAIT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("boom");
    }

    @Test
    void shouldRejectAMissingPrimitiveArgumentAsInvalid() {
        Mono<?> result = methodsOf(new NamedService()).get("negate").invoker().apply(null);
        assertThatThrownBy(() -> result.block(WAIT)).isInstanceOfSatisfying(HomaException.class,
                (ex) -> assertThat(ex.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT))
                .hasMessageContaining("Calc.negate needs an argument of type int");
    }

    @Test
    void shouldAdaptCompletionStages() {
        Map<String, RpcMethod> methods = methodsOf(new FutureService());
        assertThat(methods.get("later").invoker().apply(4).block(WAIT)).isEqualTo(8);
    }

    @Test
    void shouldExportOnlyOwnPublicInstanceMethods() {
        assertThat(methodsOf(new ExtendedService()).keySet()).containsExactly("own");
    }

    @Test
    void shouldRejectFluxMethods() {
        assertThatIllegalStateException().isThrownBy(() -> methodsOf(new FluxService()))
                .withMessageContaining("FluxService.stream()")
                .withMessageContaining("returns Flux");
    }

    private static Map<String, RpcMethod> methodsOf(Object bean) {
        String service = HomaServiceRegistrar.serviceName(
                AnnotatedElementUtils.findMergedAnnotation(bean.getClass(), HomaService.class),
                bean.getClass());
        return HomaServiceRegistrar.rpcMethods(service, bean, bean.getClass()).stream()
                .collect(Collectors.toMap(RpcMethod::method, Function.identity(), (a, b) -> a,
                        java.util.LinkedHashMap::new));
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

        public Flux<String> stream() {
            return Flux.just("a");
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
