package io.homa.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.HomaServerInterceptor;
import io.homa.spring.HomaMethod;
import io.homa.spring.HomaService;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import picocli.CommandLine;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * The {@code homa} command, run in this JVM against a Spring Boot application that exports a
 * {@code @HomaService} on a loopback port (where reflection is on by default).
 */
class HomaCliEndToEndTests {

    private static ConfigurableApplicationContext server;

    private static String peer;

    @BeforeAll
    static void startServer() {
        server = start("auto");
        peer = "--peer=127.0.0.1:" + server.getEnvironment().getProperty("local.homa.port");
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    static ConfigurableApplicationContext start(String reflection, String... properties) {
        return new SpringApplicationBuilder(CalcApplication.class)
                .web(WebApplicationType.NONE)
                .properties("homa.server.port=0", "homa.server.bind-address=127.0.0.1",
                        "homa.server.reflection.enabled=" + reflection, "spring.main.banner-mode=off")
                .properties(properties)
                .run();
    }

    @Test
    void shouldListTheServiceAndItsMethods() {
        Run run = homa("list", peer);
        assertThat(run.exitCode).as(run.err).isZero();
        assertThat(run.out).startsWith("calc\n")
                .contains("  int add(int a, int b)  [unary, idempotent]\n")
                .contains("  Flux<Integer> count(int limit)  [stream]\n")
                .contains("  Greeting greet(Person person)  [unary]\n")
                .contains("  void fail(String message)  [unary]\n")
                .doesNotContain("homa.reflection");
        assertThat(run.err).isEmpty();
    }

    @Test
    void shouldPrintTheRawListingWithSchemas() {
        Run run = homa("list", "--json", peer);
        assertThat(run.exitCode).as(run.err).isZero();
        JsonNode listing = HomaCli.MAPPER.readTree(run.out);
        JsonNode greet = listing.at("/services/0/methods").values().stream()
                .filter((method) -> method.get("name").asString().equals("greet")).findFirst().orElseThrow();
        assertThat(greet.at("/parameters/0/schema/properties/name/type").asString()).isEqualTo("string");
        assertThat(greet.at("/result/type").asString()).isEqualTo(CalcService.Greeting.class.getTypeName());
    }

    @Test
    void shouldCallAUnaryMethodWithJsonArguments() {
        Run add = homa("call", "calc", "add", "20", "22", peer);
        assertThat(add.exitCode).as(add.err).isZero();
        assertThat(add.out).isEqualTo("42\n");
        Run negative = homa("call", "calc", "add", "1", "-5", peer);
        assertThat(negative.out).as(negative.err).isEqualTo("-4\n");
        Run echo = homa("call", peer, "calc", "echo", "\"key-042\"");
        assertThat(echo.out).as(echo.err).isEqualTo("\"key-042\"\n");
        Run greet = homa("call", "calc", "greet", "{\"name\":\"Ada\"}", peer);
        assertThat(HomaCli.MAPPER.readTree(greet.out).get("text").asString()).as(greet.err).isEqualTo("Hello, Ada");
        assertThat(greet.out).isEqualTo("{\n  \"text\": \"Hello, Ada\"\n}\n");
        Run compact = homa("call", "calc", "greet", "{\"name\":\"Ada\"}", "--compact", peer);
        assertThat(compact.out).isEqualTo("{\"text\":\"Hello, Ada\"}\n");
        Run none = homa("call", "calc", "reset", peer);
        assertThat(none.exitCode).isZero();
        assertThat(none.out).isEmpty();
        Run bytes = homa("call", "calc", "reverse", "\"AQID\"", peer);
        assertThat(bytes.out).as(bytes.err).isEqualTo("\"AwIB\"\n");
    }

    @Test
    void shouldPrintEachItemOfAStreamOnALine() {
        Run run = homa("call", "calc", "count", "3", peer);
        assertThat(run.exitCode).as(run.err).isZero();
        assertThat(run.out).isEqualTo("1\n2\n3\n");
    }

    @Test
    void shouldSendTheMetadata() {
        Run run = homa("call", "calc", "add", "1", "2", "-m", "tenant=blue", "--metadata", "user=ada", peer);
        assertThat(run.exitCode).as(run.err).isZero();
        assertThat(server.getBean(CalcApplication.class).metadata.get("calc.add"))
                .containsEntry("tenant", "blue").containsEntry("user", "ada");
    }

    @Test
    void shouldPrintTheStatusOfAFailedCallAndExitWithItsCode() {
        Run unknown = homa("call", "calc", "divide", "1", "2", peer);
        assertThat(unknown.exitCode).isEqualTo(64 + HomaStatus.UNIMPLEMENTED.code()).isEqualTo(76);
        assertThat(unknown.err).startsWith("UNIMPLEMENTED: ").contains("calc.divide");
        assertThat(unknown.out).isEmpty();

        Run notFound = homa("call", "calc", "fail", "\"no value for key 'x'\"", peer);
        assertThat(notFound.exitCode).isEqualTo(69);
        assertThat(notFound.err).isEqualTo("NOT_FOUND: no value for key 'x'\n");

        Run late = homa("call", "calc", "never", "--timeout=200ms", peer);
        assertThat(late.exitCode).isEqualTo(64 + HomaStatus.DEADLINE_EXCEEDED.code());
        assertThat(late.err).startsWith("DEADLINE_EXCEEDED: ");
    }

    @Test
    void shouldRejectBadArgumentsBeforeCalling() {
        int adds = server.getBean(CalcService.class).calls.getOrDefault("add", 0);
        Run bare = homa("call", "calc", "echo", "key-042", peer);
        assertThat(bare.exitCode).isEqualTo(2);
        assertThat(bare.err).contains("argument 1 (key-042) is not one JSON value")
                .contains("a string needs its quotes: '\"key-042\"'");
        Run arity = homa("call", "calc", "add", "1", peer);
        assertThat(arity.exitCode).isEqualTo(2);
        assertThat(arity.err).contains("calc.add takes 2 argument(s), got 1: int add(int a, int b)");
        assertThat(server.getBean(CalcService.class).calls.getOrDefault("add", 0)).as("not called with one argument")
                .isEqualTo(adds);
        Run badPeer = homa("list", "--peer=localhost");
        assertThat(badPeer.exitCode).isEqualTo(2);
        assertThat(badPeer.err).contains("--peer must be HOST:PORT");
        Run reserved = homa("call", "calc", "add", "1", "2", "-m", "homa-timeout-ms=5", peer);
        assertThat(reserved.exitCode).isEqualTo(2);
        Run missing = homa();
        assertThat(missing.exitCode).isEqualTo(2);
        assertThat(missing.err).contains("Missing command");
    }

    @Test
    void shouldCallUnaryWhenTheServerServesNoReflection() {
        try (ConfigurableApplicationContext plain = start("false")) {
            String plainPeer = "--peer=127.0.0.1:" + plain.getEnvironment().getProperty("local.homa.port");
            Run list = homa("list", plainPeer);
            assertThat(list.exitCode).isEqualTo(76);
            assertThat(list.err).startsWith("UNIMPLEMENTED: ").contains("homa.server.reflection.enabled=true");
            Run add = homa("call", "calc", "add", "2", "3", plainPeer);
            assertThat(add.exitCode).as(add.err).isZero();
            assertThat(add.out).isEqualTo("5\n");
        }
    }

    @Test
    void shouldTalkToAnEndpointThatAuthenticatesItsPackets() {
        String key = java.util.Base64.getEncoder().encodeToString(new byte[32]);
        try (ConfigurableApplicationContext sealed = start("auto", "homa.security.mode=authenticate",
                "homa.security.keys.7=" + key, "homa.security.active-key=7")) {
            String sealedPeer = "--peer=127.0.0.1:" + sealed.getEnvironment().getProperty("local.homa.port");
            Run add = homa("call", "calc", "add", "2", "3", sealedPeer, "--key=7=" + key);
            assertThat(add.exitCode).as(add.err).isZero();
            assertThat(add.out).isEqualTo("5\n");
            Run badKey = homa("list", sealedPeer, "--key=7=AAAA");
            assertThat(badKey.exitCode).isEqualTo(2);
            assertThat(badKey.err).contains("--key must be ID=BASE64").doesNotContain(key);
        }
    }

    private static Run homa(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine commandLine = HomaCli.commandLine();
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        int exitCode = commandLine.execute(args);
        return new Run(exitCode, out.toString(), err.toString());
    }

    record Run(int exitCode, String out, String err) {
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(CalcService.class)
    static class CalcApplication {

        final Map<String, Map<String, String>> metadata = new ConcurrentHashMap<>();

        @Bean
        HomaServerInterceptor metadataRecorder() {
            return (call, next) -> {
                this.metadata.put(call.fullMethodName(), call.metadata());
                return next.apply(call);
            };
        }
    }

    @HomaService("calc")
    static class CalcService {

        final Map<String, Integer> calls = new ConcurrentHashMap<>();

        @HomaMethod(idempotent = true)
        public int add(int a, int b) {
            this.calls.merge("add", 1, Integer::sum);
            return a + b;
        }

        public Flux<Integer> count(int limit) {
            return Flux.range(1, limit);
        }

        public String echo(String text) {
            return text;
        }

        public Greeting greet(Person person) {
            return new Greeting("Hello, " + person.name());
        }

        public void reset() {
        }

        public byte[] reverse(byte[] bytes) {
            byte[] reversed = new byte[bytes.length];
            for (int i = 0; i < bytes.length; i++) {
                reversed[i] = bytes[bytes.length - 1 - i];
            }
            return reversed;
        }

        public void fail(String message) {
            throw new HomaException(HomaStatus.NOT_FOUND, message);
        }

        public Mono<String> never() {
            return Mono.never();
        }

        record Person(String name) {
        }

        record Greeting(String text) {
        }
    }
}
