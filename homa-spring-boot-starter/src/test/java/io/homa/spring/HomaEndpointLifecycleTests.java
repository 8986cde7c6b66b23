package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.homa.engine.wire.PacketType;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.NanoClock;
import io.homa.reactive.rpc.CallOptions;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.reactive.rpc.StaticServiceResolver;
import io.homa.spring.observability.LoopbackRpc;
import java.lang.reflect.Type;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;
import reactor.netty.resources.LoopResources;

/**
 * The endpoint's one lifecycle ({@link HomaEndpointLifecycle}): the socket binds while the context
 * is built, so the application's clients can call during refresh; requests reaching this endpoint
 * meanwhile are held by the engine and served once the context is refreshed; the bound port is
 * published as {@code local.homa.port}; one INFO line names the address and the services.
 */
@ExtendWith(OutputCaptureExtension.class)
class HomaEndpointLifecycleTests {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final LoopbackRpc remote = new LoopbackRpc();

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class))
            .withPropertyValues(LoopbackRpc.properties());

    @AfterEach
    void closeRemote() {
        this.remote.close();
    }

    @Test
    void shouldHoldRequestsUntilRefreshedWhileTheApplicationsClientsCallOut() {
        this.remote.dispatcher().register(RpcMethod.unary("echo", "say", new Type[] { String.class },
                (args) -> Mono.just("echo " + args[0])));
        InetSocketAddress remoteAddress = this.remote.server().localAddress();
        this.contextRunner.withUserConfiguration(EarlyCallerConfiguration.class)
                .withPropertyValues("homa.client.peers.echo=127.0.0.1:" + remoteAddress.getPort())
                .run((context) -> {
                    assertThat(context).hasNotFailed();
                    EarlyCaller caller = context.getBean(EarlyCaller.class);
                    assertThat(caller.remoteAnswer).as("the application's client called out during refresh")
                            .isEqualTo("echo hello");
                    assertThat(caller.requestArrivedBeforeRefresh)
                            .as("the early request reached this endpoint during refresh").isTrue();
                    assertThat(context.getBean(ServiceCallsAtStart.class).callsAtStart)
                            .as("probe calls when the lifecycles started: none served before").isZero();
                    assertThat(caller.ownAnswer.get().block(TIMEOUT)).as("served once refreshed, not UNIMPLEMENTED")
                            .isEqualTo("pong ping");
                    assertThat(context.getBean(ProbeService.class).calls).hasValue(1);
                });
    }

    @Test
    void shouldPublishTheBoundPortAndLogTheAddressAndServices(CapturedOutput output) {
        this.contextRunner.withUserConfiguration(ProbeConfiguration.class).run((context) -> {
            assertThat(context).hasNotFailed();
            int port = context.getBean(HomaTransport.class).localAddress().getPort();
            assertThat(port).isPositive();
            assertThat(context.getEnvironment().getProperty("local.homa.port", Integer.class)).isEqualTo(port);
            assertThat(context.getBean(PortHolder.class).port).as("@LocalHomaPort").isEqualTo(port);
            assertThat(output).contains("Homa endpoint on UDP /127.0.0.1:" + port
                    + " serving probe [ping, twice], reflection on (");
        });
    }

    @Test
    void shouldKeepTheJvmAliveWhileServingAsSpringBootServersDo() throws Exception {
        java.util.concurrent.atomic.AtomicReference<Thread> await = new java.util.concurrent.atomic.AtomicReference<>();
        this.contextRunner.withUserConfiguration(ProbeConfiguration.class).run((context) -> {
            assertThat(context).hasNotFailed();
            Thread thread = Thread.getAllStackTraces().keySet().stream()
                    .filter((t) -> t.getName().equals("homa-server-await") && t.isAlive())
                    .findFirst().orElse(null);
            assertThat(thread).as("a thread that keeps the JVM alive while serving").isNotNull();
            assertThat(thread.isDaemon()).isFalse();
            await.set(thread);
        });
        await.get().join(TIMEOUT.toMillis());
        assertThat(await.get().isAlive()).as("ends with the context").isFalse();
    }

    @Test
    void shouldSaySoWhenNoServiceIsExported(CapturedOutput output) {
        this.contextRunner.run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(output).contains("serving no services");
        });
    }

    @Test
    void shouldApplyTransportCustomizersAndDisposeItsLoopsWithTheContext() {
        NanoClock clock = System::nanoTime;
        AtomicReference<LoopResources> loops = new AtomicReference<>();
        this.contextRunner
                .withBean("clockCustomizer", HomaTransportCustomizer.class, () -> (spec) -> spec.clock(clock))
                .run((context) -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(HomaTransport.class).clock()).as("customized").isSameAs(clock);
                    loops.set(context.getBean(HomaAutoConfiguration.LOOP_RESOURCES_BEAN, LoopResources.class));
                    assertThat(loops.get().isDisposed()).isFalse();
                });
        assertThat(loops.get().isDisposed()).as("the starter's loops are disposed with the context").isTrue();
    }

    @Test
    void shouldGiveTheInjectedClientTheYmlTimeoutsOfEachServiceAndMethod() {
        this.remote.dispatcher().register(RpcMethod.unary("sleepy", "nap", new Type[] { String.class },
                (args) -> Mono.delay(Duration.ofSeconds(30)).thenReturn("late")));
        this.remote.dispatcher().register(RpcMethod.unary("sleepy", "doze", new Type[] { String.class },
                (args) -> Mono.delay(Duration.ofSeconds(30)).thenReturn("late")));
        this.contextRunner
                .withPropertyValues("homa.client.peers.sleepy=127.0.0.1:" + this.remote.server().localAddress().getPort(),
                        "homa.client.default-timeout=20s", "homa.client.services.sleepy.timeout=400ms",
                        "homa.client.services.sleepy.methods.nap.timeout=200ms")
                .run((context) -> {
                    HomaClient client = context.getBean(HomaClient.class);
                    // The method's yml timeout, then the service's: not the 20 s default.
                    assertThatThrownBy(() -> client.call("sleepy", "nap", "x", String.class).block(TIMEOUT))
                            .isInstanceOf(HomaException.class)
                            .hasMessageContaining("deadline of 200 ms exceeded calling sleepy.nap");
                    assertThatThrownBy(() -> client.call("sleepy", "doze", "x", String.class).block(TIMEOUT))
                            .isInstanceOf(HomaException.class)
                            .hasMessageContaining("deadline of 400 ms exceeded calling sleepy.doze");
                    // A timeout the call names itself still wins.
                    assertThatThrownBy(() -> client.call("sleepy", "nap", new Object[] { "x" }, String.class,
                            CallOptions.defaults().withTimeout(Duration.ofMillis(300))).block(TIMEOUT))
                            .hasMessageContaining("deadline of 300 ms exceeded");
                });
    }

    @HomaService("probe")
    static class ProbeService {

        final AtomicInteger calls = new AtomicInteger();

        public String ping(String text) {
            this.calls.incrementAndGet();
            return "pong " + text;
        }

        public String twice(String text) {
            return text + text;
        }
    }

    static class PortHolder {

        final int port;

        PortHolder(@LocalHomaPort int port) {
            this.port = port;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class ProbeConfiguration {

        @Bean
        ProbeService probeService() {
            return new ProbeService();
        }

        /** Resolved once the endpoint is bound (here: it depends on the transport; in a test class, after start). */
        @Bean
        PortHolder portHolder(HomaTransport bound, @LocalHomaPort int port) {
            return new PortHolder(port);
        }
    }

    /**
     * During refresh: calls a remote service through the application's {@link HomaClient} (and
     * waits for the answer), then sends a request to this endpoint's own probe service without
     * waiting, and waits until the endpoint has received it.
     */
    static class EarlyCaller implements InitializingBean {

        private final HomaClient client;

        private final HomaTransport transport;

        String remoteAnswer;

        boolean requestArrivedBeforeRefresh;

        final AtomicReference<Mono<String>> ownAnswer = new AtomicReference<>();

        EarlyCaller(HomaClient client, HomaTransport transport) {
            this.client = client;
            this.transport = transport;
        }

        @Override
        public void afterPropertiesSet() throws Exception {
            this.remoteAnswer = this.client.call("echo", "say", "hello", String.class).block(TIMEOUT);
            HomaClient self = HomaClient.builder(this.transport)
                    .resolver(new StaticServiceResolver(Map.of("probe", this.transport.localAddress())))
                    .defaultTimeout(TIMEOUT)
                    .build();
            this.ownAnswer.set(self.call("probe", "ping", "ping", String.class).cache());
            this.ownAnswer.get().subscribe((answer) -> { }, (error) -> { });
            try {
                // the echo's response, and our own request
                await().atMost(TIMEOUT).until(() -> dataPacketsReceived() > 1);
            } catch (ConditionTimeoutException ex) {
                // the test reports that the request did not arrive
            }
            this.requestArrivedBeforeRefresh = dataPacketsReceived() > 1;
        }

        private long dataPacketsReceived() {
            return this.transport.counters().block(TIMEOUT).packetsReceived(PacketType.DATA);
        }
    }

    /** Started just before the endpoint (an earlier phase): how many probe calls had run by then. */
    static class ServiceCallsAtStart implements SmartLifecycle {

        private final ProbeService probe;

        int callsAtStart = -1;

        private boolean running;

        ServiceCallsAtStart(ProbeService probe) {
            this.probe = probe;
        }

        @Override
        public void start() {
            this.callsAtStart = this.probe.calls.get();
            this.running = true;
        }

        @Override
        public void stop() {
            this.running = false;
        }

        @Override
        public boolean isRunning() {
            return this.running;
        }

        @Override
        public int getPhase() {
            return HomaEndpointLifecycle.PHASE - 1;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class EarlyCallerConfiguration {

        @Bean
        ProbeService probeService() {
            return new ProbeService();
        }

        @Bean
        EarlyCaller earlyCaller(HomaClient client, HomaTransport transport) {
            return new EarlyCaller(client, transport);
        }

        @Bean
        ServiceCallsAtStart serviceCallsAtStart(ProbeService probe) {
            return new ServiceCallsAtStart(probe);
        }
    }
}
