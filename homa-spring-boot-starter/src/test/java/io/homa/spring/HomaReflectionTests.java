package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.reactive.HomaTransport;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.spring.reflection.HomaReflectionService;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/** The built-in reflection service {@code homa.reflection} and {@code homa.server.reflection.enabled}. */
class HomaReflectionTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /** 32 bytes of zeros, base64. */
    private static final String KEY = java.util.Base64.getEncoder().encodeToString(new byte[32]);

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class))
            .withUserConfiguration(ShopService.class)
            .withPropertyValues("homa.server.port=0");

    @Test
    void shouldListTheServicesWithSignaturesAndSchemas() {
        this.contextRunner.withPropertyValues("homa.server.bind-address=127.0.0.1").run((context) -> {
            JsonNode listing = list(context);
            assertThat(listing.get("schemaDialect").asString())
                    .isEqualTo("https://json-schema.org/draft/2020-12/schema");
            assertThat(listing.get("services").values()).extracting((service) -> service.get("name").asString())
                    .containsExactly("shop");
            JsonNode methods = listing.at("/services/0/methods");
            assertThat(methods.values()).extracting((method) -> method.get("name").asString())
                    .containsExactly("all", "browse", "clear", "find");

            JsonNode find = methods.get(3);
            assertThat(find.get("kind").asString()).isEqualTo("unary");
            assertThat(find.get("idempotent").asBoolean()).isTrue();
            assertThat(find.at("/parameters/0/name").asString()).isEqualTo("sku");
            assertThat(find.at("/parameters/0/type").asString()).isEqualTo("java.lang.String");
            assertThat(find.at("/parameters/0/schema/type").asString()).isEqualTo("string");
            assertThat(find.at("/result/type").asString()).isEqualTo(Item.class.getTypeName());
            assertThat(find.at("/result/schema/properties/count/type").asString()).isEqualTo("integer");

            JsonNode browse = methods.get(1);
            assertThat(browse.get("kind").asString()).isEqualTo("stream");
            assertThat(browse.get("idempotent").asBoolean()).isFalse();
            assertThat(browse.get("parameters").values()).extracting((parameter) -> parameter.get("name").asString()
                    + ":" + parameter.get("type").asString())
                    .containsExactly("prefix:java.lang.String", "limit:int");
            assertThat(browse.at("/result/type").asString()).isEqualTo(Item.class.getTypeName());

            JsonNode all = methods.get(0);
            assertThat(all.get("parameters").isEmpty()).isTrue();
            assertThat(all.at("/result/type").asString()).isEqualTo("java.util.List<" + Item.class.getTypeName() + ">");
            assertThat(all.at("/result/schema/type").asString()).isEqualTo("array");

            JsonNode clear = methods.get(2);
            assertThat(clear.at("/result/type").asString()).isEqualTo("void");
            assertThat(clear.at("/result/schema/type").asString()).isEqualTo("null");
        });
    }

    @Test
    void shouldListAMethodRegisteredWithoutAJavaSignatureWithAnUnknownResult() {
        this.contextRunner.withPropertyValues("homa.server.bind-address=127.0.0.1").run((context) -> {
            context.getBean(RpcDispatcher.class).register(RpcMethod.stream("raw", "ticks", new java.lang.reflect.Type[] {
                long.class}, (arguments) -> Flux.just(1L)));
            JsonNode raw = list(context).at("/services/0");
            assertThat(raw.get("name").asString()).isEqualTo("raw");
            assertThat(raw.at("/methods/0/kind").asString()).isEqualTo("stream");
            assertThat(raw.at("/methods/0/parameters/0/name").isNull()).isTrue();
            assertThat(raw.at("/methods/0/parameters/0/type").asString()).isEqualTo("long");
            assertThat(raw.at("/methods/0/result").isNull()).isTrue();
        });
    }

    @ParameterizedTest(name = "{0}, {1}")
    @CsvSource(delimiter = '|', textBlock = """
            127.0.0.1 | auto  | true
            127.0.0.1 | true  | true
            127.0.0.1 | false | false
            127.0.0.1 | FALSE | false
            0.0.0.0   | auto  | false
            0.0.0.0   | ' Auto ' | false
            0.0.0.0   | true  | true
            """)
    void shouldServeReflectionWhereTheSettingAndTheBindAddressAllow(String bindAddress, String setting,
            boolean served) {
        this.contextRunner.withPropertyValues("homa.server.bind-address=" + bindAddress,
                "homa.server.reflection.enabled=" + setting).run((context) -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(RpcDispatcher.class)
                            .lookup(HomaReflectionService.SERVICE, HomaReflectionService.LIST).isPresent())
                            .isEqualTo(served);
                });
    }

    @Test
    void shouldServeReflectionByDefaultWhenPacketsAreAuthenticated() {
        this.contextRunner.withPropertyValues("homa.server.bind-address=0.0.0.0", "homa.security.mode=authenticate",
                "homa.security.keys.1=" + KEY, "homa.security.active-key=1").run((context) ->
                assertThat(context.getBean(RpcDispatcher.class)
                        .lookup(HomaReflectionService.SERVICE, HomaReflectionService.LIST)).isPresent());
    }

    @Test
    void shouldNotServeReflectionWhenServicesAreNotExported() {
        this.contextRunner.withPropertyValues("homa.server.bind-address=127.0.0.1", "homa.server.enabled=false")
                .run((context) -> assertThat(context.getBean(RpcDispatcher.class).methods()).isEmpty());
    }

    @Test
    void shouldDecideAutoFromTheBoundAddressAndTheSecurityMode() {
        InetSocketAddress loopback = new InetSocketAddress("127.0.0.1", 4000);
        InetSocketAddress loopback6 = new InetSocketAddress("::1", 4000);
        InetSocketAddress wildcard = new InetSocketAddress("0.0.0.0", 4000);
        InetSocketAddress other = new InetSocketAddress("192.0.2.1", 4000);
        var off = io.homa.reactive.HomaSecurityConfig.Mode.OFF;
        assertThat(HomaReflectionRegistrar.enabled(null, loopback, off)).isTrue();
        assertThat(HomaReflectionRegistrar.enabled(null, loopback6, off)).isTrue();
        assertThat(HomaReflectionRegistrar.enabled(null, wildcard, off)).isFalse();
        assertThat(HomaReflectionRegistrar.enabled(null, other, off)).isFalse();
        assertThat(HomaReflectionRegistrar.enabled(null, other, io.homa.reactive.HomaSecurityConfig.Mode.AUTHENTICATE))
                .isTrue();
        assertThat(HomaReflectionRegistrar.enabled(null, other, io.homa.reactive.HomaSecurityConfig.Mode.ENCRYPT))
                .isTrue();
        assertThat(HomaReflectionRegistrar.enabled(false, loopback, off)).isFalse();
        assertThat(HomaReflectionRegistrar.enabled(true, other, off)).isTrue();
    }

    private static JsonNode list(ApplicationContext context) {
        HomaTransport transport = context.getBean(HomaTransport.class);
        InetSocketAddress self = new InetSocketAddress("127.0.0.1", transport.localAddress().getPort());
        HomaClient client = HomaClient.builder(transport).resolver((service) -> Mono.just(self)).build();
        return client.call(HomaReflectionService.SERVICE, HomaReflectionService.LIST, null, JsonNode.class)
                .block(WAIT);
    }

    record Item(String sku, int count) {
    }

    @HomaService("shop")
    static class ShopService {

        @HomaMethod(idempotent = true)
        public Mono<Item> find(String sku) {
            return Mono.just(new Item(sku, 1));
        }

        public Flux<Item> browse(String prefix, int limit) {
            return Flux.range(0, limit).map((i) -> new Item(prefix + i, i));
        }

        public void clear() {
        }

        public CompletionStage<List<Item>> all() {
            return CompletableFuture.completedFuture(List.of());
        }
    }
}
