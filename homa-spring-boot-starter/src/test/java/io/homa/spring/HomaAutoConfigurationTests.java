package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.engine.EngineConfig;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaSecurityConfig;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.HomaClientInterceptor;
import io.homa.reactive.rpc.RpcCall;
import io.homa.reactive.rpc.PayloadCodec;
import io.homa.reactive.rpc.PayloadCodecs;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.ServiceResolver;
import io.homa.spring.client.HomaServiceProxyFactory;
import io.homa.spring.internal.HomaSettingsMapper;
import java.lang.reflect.Type;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

class HomaAutoConfigurationTests {

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class))
            .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1");

    @Test
    void shouldProvideEveryBeanAndBindAnEphemeralPort() {
        this.contextRunner.run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(PayloadCodecs.class);
            assertThat(context.getBean(PayloadCodecs.class).names()).containsExactly("json", "smile", "cbor");
            assertThat(context).hasSingleBean(ServiceResolver.class);
            assertThat(context).hasSingleBean(RpcDispatcher.class);
            assertThat(context).hasSingleBean(HomaTransportConfig.class);
            assertThat(context).hasSingleBean(HomaTransport.class);
            assertThat(context).hasSingleBean(HomaClient.class);
            assertThat(context).hasSingleBean(HomaServiceRegistrar.class);
            assertThat(context).hasSingleBean(HomaServiceProxyFactory.class);
            assertThat(context).hasSingleBean(HomaEndpointLifecycle.class);
            InetSocketAddress local = context.getBean(HomaTransport.class).localAddress();
            assertThat(local.getPort()).isBetween(1, 65535);
            assertThat(context.getEnvironment().getProperty("local.homa.port", Integer.class))
                    .as("local.homa.port").isEqualTo(local.getPort());
            assertThat(context.getBean(HomaTransport.class).isServing()).as("serving once refreshed").isTrue();
            assertThat(context.getBean(HomaEndpointLifecycle.class).isRunning()).isTrue();
        });
    }

    @Test
    void shouldUseEngineDefaultsWhenNothingIsSet() {
        this.contextRunner.run((context) -> {
            HomaTransportConfig config = context.getBean(HomaTransportConfig.class);
            assertThat(config.bindAddress()).isEqualTo("127.0.0.1");
            assertThat(config.port()).isZero();
            assertThat(config.receiveBufferBytes()).isEqualTo(4 * 1024 * 1024);
            assertThat(config.sendBufferBytes()).isEqualTo(4 * 1024 * 1024);
            assertThat(config.nativeTransport()).isTrue();
            assertThat(config.priorityTos()).isEqualTo(HomaTransportConfig.PriorityTos.AUTO);
            assertThat(config.incastBufferBytes()).as("chosen by the bound address").isEqualTo(HomaTransportConfig.AUTO_INCAST_BUFFER);
            assertThat(config.linkMbps()).as("the device's speed").isEqualTo(HomaTransportConfig.AUTO_LINK_MBPS);
            assertThat(config.engine()).isEqualTo(EngineConfig.defaults());
        });
    }

    @Test
    void shouldDefaultToPort4000OnAnyAddress() {
        HomaProperties properties = new HomaProperties();
        properties.validate();
        HomaTransportConfig config = HomaSettingsMapper.transportConfig(properties);
        assertThat(config.port()).isEqualTo(4000);
        assertThat(config.bindAddress()).isEqualTo("0.0.0.0");
        assertThat(config.engine()).isEqualTo(EngineConfig.defaults());
    }

    @Test
    void shouldMapEveryPropertyToTheTransportConfig() {
        this.contextRunner
                .withPropertyValues("homa.protocol.mtu=9000", "homa.protocol.unscheduled-bytes=10KB",
                        "homa.protocol.max-message-size=2MB", "homa.protocol.resend-interval=25",
                        "homa.protocol.peer-silence-timeout=7s", "homa.transport.receive-buffer-size=8MB",
                        "homa.transport.send-buffer-size=65536", "homa.transport.native=false",
                        "homa.protocol.link-mbps=10000", "homa.protocol.max-nic-queue=20us", "homa.transport.device-mtu=false", "homa.protocol.peer-idle-timeout=5m",
                        "homa.protocol.max-inbound-buffer=1GB", "homa.protocol.max-overcommit=3",
                        "homa.protocol.max-grants-per-peer=2", "homa.protocol.max-incoming=1MB",
                        "homa.protocol.fifo-grant-fraction=0.2", "homa.protocol.priority-levels=4",
                        "homa.protocol.incast-threshold=500", "homa.protocol.incast-unscheduled-bytes=2KB",
                        "homa.protocol.incast-buffer-bytes=3MB", "homa.transport.priority-tos=false",
                        "homa.protocol.rtt-bytes=200KB", "homa.transport.busy-poll=20us",
                        "homa.protocol.congestion-control=RTT", "homa.protocol.rtt-probe-interval=250us")
                .run((context) -> {
                    HomaTransportConfig config = context.getBean(HomaTransportConfig.class);
                    assertThat(config.busyPollNs()).isEqualTo(20_000);
                    assertThat(config.engine().mtuBytes()).isEqualTo(9000);
                    assertThat(config.engine().unscheduledBytes()).isEqualTo(10 * 1024);
                    assertThat(config.engine().maxMessageBytes()).isEqualTo(2 * 1024 * 1024);
                    assertThat(config.engine().resendIntervalNs()).isEqualTo(25_000_000L);
                    assertThat(config.engine().peerSilenceTimeoutNs()).isEqualTo(7_000_000_000L);
                    assertThat(config.receiveBufferBytes()).isEqualTo(8 * 1024 * 1024);
                    assertThat(config.sendBufferBytes()).isEqualTo(65536);
                    assertThat(config.nativeTransport()).isFalse();
                    assertThat(config.linkMbps()).isEqualTo(10_000);
                    assertThat(config.maxNicQueueNs()).isEqualTo(20_000);
                    assertThat(config.deviceMtu()).isFalse();
                    assertThat(config.engine().peerIdleTimeoutNs()).isEqualTo(300_000_000_000L);
                    assertThat(config.engine().maxInboundBufferBytes()).isEqualTo(1L << 30);
                    assertThat(config.engine().maxOvercommit()).isEqualTo(3);
                    assertThat(config.engine().maxGrantsPerPeer()).isEqualTo(2);
                    assertThat(config.engine().maxIncomingBytes()).isEqualTo(1024 * 1024);
                    assertThat(config.engine().fifoGrantFraction()).isEqualTo(0.2);
                    assertThat(config.engine().priorityLevels()).isEqualTo(4);
                    assertThat(config.engine().incastThreshold()).isEqualTo(500);
                    assertThat(config.engine().incastUnscheduledBytes()).isEqualTo(2048);
                    assertThat(config.incastBufferBytes()).isEqualTo(3 * 1024 * 1024);
                    assertThat(config.priorityTos()).isEqualTo(HomaTransportConfig.PriorityTos.OFF);
                    assertThat(config.engine().rttBytes()).isEqualTo(200 * 1024);
                    assertThat(config.engine().congestionControl()).isEqualTo(io.homa.engine.CongestionControl.RTT);
                    assertThat(config.engine().rttProbeIntervalNs()).isEqualTo(250_000);
                });
    }

    @Test
    void shouldResolvePeersFromProperties() {
        this.contextRunner
                .withPropertyValues("homa.client.peers.EchoService=127.0.0.1:4100",
                        "homa.client.peers[io.example.Kv]=[::1]:4200")
                .run((context) -> {
                    ServiceResolver resolver = context.getBean(ServiceResolver.class);
                    assertThat(resolver.resolve("EchoService").block()).isEqualTo(new InetSocketAddress("127.0.0.1", 4100));
                    assertThat(resolver.resolve("io.example.Kv").block()).isEqualTo(new InetSocketAddress("::1", 4200));
                });
    }

    @Test
    void shouldFailUnknownServiceWithUnavailable() {
        this.contextRunner.run((context) -> {
            ServiceResolver resolver = context.getBean(ServiceResolver.class);
            assertThatThrownBy(() -> resolver.resolve("Nobody").block())
                    .isInstanceOfSatisfying(HomaException.class,
                            (ex) -> assertThat(ex.status()).isEqualTo(HomaStatus.UNAVAILABLE))
                    .hasMessageContaining("Nobody");
        });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', textBlock = """
            homa.protocol.mtu                  | 100     | between 256 and 65535
            homa.protocol.mtu                  | 70000   | between 256 and 65535
            homa.protocol.unscheduled-bytes    | 0       | between 1B and 64MB
            homa.protocol.max-message-size     | 100MB   | between 1B and 64MB
            homa.protocol.resend-interval      | 0ms     | between 1ms and 60s
            homa.protocol.resend-interval      | 2m      | between 1ms and 60s
            homa.protocol.peer-silence-timeout | 50ms    | between 100ms and 600s
            homa.protocol.peer-silence-timeout | 11m     | between 100ms and 600s
            homa.protocol.timeout-resends      | 10      | set homa.protocol.peer-silence-timeout (a duration, default 5s) instead
            homa.server.port                   | 70000   | between 0 and 65535
            homa.server.port                   | -1      | between 0 and 65535
            homa.server.bind-address           | ' '     | host name or IP address
            homa.transport.receive-buffer-size | 1KB     | between 64KB and 1GB
            homa.transport.send-buffer-size    | 2GB     | between 64KB and 1GB
            homa.protocol.link-mbps            | -1      | between 0 and 1000000
            homa.protocol.link-mbps            | fast    | must be auto or a whole number
            homa.protocol.link-mbps            | 1000001 | between 0 and 1000000
            homa.protocol.max-nic-queue        | 500ns   | between 1us and 10ms
            homa.protocol.max-nic-queue        | 11ms    | between 1us and 10ms
            homa.transport.link-mbps           | 1000    | set homa.protocol.link-mbps instead
            homa.protocol.peer-idle-timeout    | 0s      | between 1s and 1d
            homa.protocol.max-inbound-buffer   | 1KB     | between 64KB and 1TB
            homa.protocol.max-overcommit       | 0       | between 1 and 64
            homa.protocol.max-overcommit       | 65      | between 1 and 64
            homa.protocol.max-grants-per-peer  | 0       | between 1 and 64
            homa.protocol.max-grants-per-peer  | 65      | between 1 and 64
            homa.protocol.max-incoming         | 1415B   | (1416..1073741824 bytes)
            homa.protocol.max-incoming         | 2GB     | (1416..1073741824 bytes)
            homa.protocol.fifo-grant-fraction  | -0.1    | between 0 and 0.5
            homa.protocol.fifo-grant-fraction  | 0.6     | between 0 and 0.5
            homa.protocol.fifo-grant-fraction  | NaN     | between 0 and 0.5
            homa.protocol.priority-levels      | 0       | between 1 and 8
            homa.protocol.priority-levels      | 9       | between 1 and 8
            homa.protocol.incast-threshold     | 0       | between 1 and 1000000
            homa.protocol.incast-threshold     | 1000001 | between 1 and 1000000
            homa.protocol.incast-unscheduled-bytes | -1B | between 0B and 64MB
            homa.protocol.incast-unscheduled-bytes | 65MB | between 0B and 64MB
            homa.protocol.incast-buffer-bytes  | -2B     | between 0B and 1GB
            homa.protocol.incast-buffer-bytes  | 2GB     | between 0B and 1GB
            homa.protocol.rtt-bytes            | -1B     | between 0B and 64MB
            homa.protocol.rtt-bytes            | 65MB    | between 0B and 64MB
            homa.protocol.congestion-control   | bbr     | must be one of rtt, off
            homa.protocol.congestion-control   | ' '     | must be one of rtt, off
            homa.protocol.rtt-probe-interval   | 5us     | between 10us and 10s
            homa.protocol.rtt-probe-interval   | 11s     | between 10us and 10s
            homa.transport.busy-poll           | 2ms     | between 0s and 1ms
            homa.transport.busy-poll           | -1us    | between 0s and 1ms
            homa.client.default-timeout        | -1s     | between 0 (no deadline) and 1d
            homa.client.default-timeout        | 2d      | between 0 (no deadline) and 1d
            homa.client.stream-batch-size      | 0       | between 1 and 65536
            homa.client.stream-batch-size      | 65537   | between 1 and 65536
            homa.client.stream-window-size     | -1B     | between 0B and 64MB
            homa.client.stream-window-size     | 65MB    | between 0B and 64MB
            homa.client.services.kv.timeout    | -5ms    | between 0 (no deadline) and 1d
            homa.client.services.kv.methods.get.timeout | 25h | between 0 (no deadline) and 1d
            homa.client.codec                  | xml     | must be one of the codecs available: json, smile, cbor
            homa.client.codec                  | ' '     | must name a codec
            homa.client.services.kv.codec      | xml     | must be one of the codecs available: json, smile, cbor
            homa.server.codecs                 | json,xml | must list codecs among the available ones: json, smile, cbor
            homa.server.codecs                 | ''      | at least one codec
            homa.server.shutdown-grace-period  | -1s     | between 0s and 1h
            homa.server.shutdown-grace-period  | 2h      | between 0s and 1h
            homa.server.shutdown-ack-timeout   | -1s     | between 0s and 1m
            homa.server.shutdown-ack-timeout   | 61s     | between 0s and 1m
            homa.server.threads                | 0       | between 1 and 10000
            homa.server.queue-capacity         | 0       | between 1 and 10000000
            homa.server.offload-size           | 65MB    | between 0B and 64MB
            homa.server.stream-window-size     | 65MB    | between 0B and 64MB
            homa.server.max-calls-in-service   | 0       | between 1 and 1000000
            homa.server.max-calls-in-service   | 1000001 | between 1 and 1000000
            homa.server.max-blocking-calls     | 0       | between 1 and 1000000
            homa.server.max-blocking-calls     | 1000001 | between 1 and 1000000
            homa.server.max-queue-delay        | -1ms    | between 0ms (no bound) and 1m
            homa.server.max-queue-delay        | 61s     | between 0ms (no bound) and 1m
            homa.server.reflection.enabled     | yes     | must be one of auto, true, false
            """)
    void shouldFailStartUpNamingPropertyAndRange(String property, String value, String range) {
        this.contextRunner.withPropertyValues(property + "=" + value).run((context) -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining(property)
                    .hasMessageContaining(range);
        });
    }

    @Test
    void shouldBoundTheDispatchersCallsInServiceByThreadsOrAsConfigured() {
        this.contextRunner.withPropertyValues("homa.server.threads=50", "homa.transport.loops=3").run((context) -> {
            RpcDispatcher dispatcher = context.getBean(RpcDispatcher.class);
            assertThat(dispatcher.maxCallsInService()).as("4 x (50 threads + 3 loops)").isEqualTo(212);
            assertThat(dispatcher.maxBlockingCalls()).as("4 x 50 threads").isEqualTo(200);
            assertThat(dispatcher.maxQueueDelay()).isEqualTo(Duration.ofMillis(50));
        });
        this.contextRunner.withPropertyValues("homa.server.threads=2").run((context) ->
                assertThat(context.getBean(RpcDispatcher.class).maxCallsInService()).as("the floor").isEqualTo(128));
        this.contextRunner.withPropertyValues("homa.server.max-calls-in-service=7", "homa.server.max-queue-delay=20",
                "homa.server.max-blocking-calls=3")
                .run((context) -> {
                    RpcDispatcher dispatcher = context.getBean(RpcDispatcher.class);
                    assertThat(dispatcher.maxCallsInService()).isEqualTo(7);
                    assertThat(dispatcher.maxBlockingCalls()).isEqualTo(3);
                    assertThat(dispatcher.maxQueueDelay()).as("a plain number is milliseconds")
                            .isEqualTo(Duration.ofMillis(20));
                });
    }

    @Test
    void shouldSetTheStreamWindowsAsConfigured() {
        this.contextRunner.run((context) -> {
            assertThat(context.getBean(RpcDispatcher.class).streamWindowBytes()).isEqualTo(8 * 1024 * 1024);
            assertThat(context.getBean(HomaClient.class).streamWindowBytes()).isEqualTo(2 * 1024 * 1024);
        });
        this.contextRunner.withPropertyValues("homa.server.stream-window-size=1MB", "homa.client.stream-window-size=0B")
                .run((context) -> {
                    assertThat(context.getBean(RpcDispatcher.class).streamWindowBytes()).isEqualTo(1024 * 1024);
                    assertThat(context.getBean(HomaClient.class).streamWindowBytes()).isZero();
                });
    }

    /** 32 bytes 0x00..0x1f, base64. */
    private static final String KEY_1 = java.util.Base64.getEncoder().encodeToString(
            java.util.stream.IntStream.range(0, 32).collect(java.io.ByteArrayOutputStream::new,
                    java.io.ByteArrayOutputStream::write, (a, b) -> a.writeBytes(b.toByteArray())).toByteArray());
    private static final String KEY_2 = java.util.Base64.getEncoder().encodeToString(new byte[32]);

    @Test
    void shouldRunTheEndpointOnALoopThatBusyPollsAsConfigured() throws ReflectiveOperationException {
        assumeTrue((boolean) Class.forName("io.netty.channel.epoll.Epoll").getMethod("isAvailable").invoke(null),
                "busy polling needs Netty's native epoll transport");
        this.contextRunner.run((context) -> {
            assertThat(context.getBean(HomaTransportConfig.class).busyPollNs())
                    .isEqualTo(HomaTransportConfig.DEFAULT_BUSY_POLL_NS);
            assertThat(context.getBean(HomaTransport.class).dataPath()).contains("busy-poll 50 µs before sleeping");
        });
        this.contextRunner.withPropertyValues("homa.transport.busy-poll=0").run((context) ->
                assertThat(context.getBean(HomaTransport.class).dataPath()).contains("busy-poll off"));
    }

    @Test
    void shouldMapSecurityPropertiesToTheTransportConfig() {
        this.contextRunner
                .withPropertyValues("homa.security.mode=encrypt", "homa.security.keys.3=" + KEY_1,
                        "homa.security.keys.200=" + KEY_2, "homa.security.active-key=200")
                .run((context) -> {
                    HomaSecurityConfig security = context.getBean(HomaTransportConfig.class).security();
                    assertThat(security.mode()).isEqualTo(HomaSecurityConfig.Mode.ENCRYPT);
                    assertThat(security.keys().keySet()).containsExactly(3, 200);
                    assertThat(security.key(3)).isEqualTo(java.util.Base64.getDecoder().decode(KEY_1));
                    assertThat(security.activeKeyId()).isEqualTo(200);
                    assertThat(context.getBean(HomaTransport.class).dataPath()).contains("packet authentication encrypt");
                });
        this.contextRunner.run((context) -> assertThat(context.getBean(HomaTransportConfig.class).security())
                .isEqualTo(HomaSecurityConfig.off()));
    }

    @Test
    void shouldServeAnAuthenticatedCallBetweenTwoContexts() {
        String[] security = {"homa.security.mode=authenticate", "homa.security.keys.1=" + KEY_1,
            "homa.security.active-key=1"};
        this.contextRunner.withPropertyValues(security).run((server) -> {
            HomaTransport serverTransport = server.getBean(HomaTransport.class);
            HomaTransport client = HomaTransport.bindNow(HomaTransportConfig.builder().bindAddress("127.0.0.1")
                    .security(server.getBean(HomaTransportConfig.class).security()).build(), null,
                    java.time.Duration.ofSeconds(10));
            try {
                // no service is registered: the dispatcher answers with an error envelope, which is still a response
                byte[] response = client.call(new InetSocketAddress("127.0.0.1", serverTransport.localAddress().getPort()),
                        new byte[] {1, 2, 3}).block(java.time.Duration.ofSeconds(10));
                assertThat(response).isNotEmpty();
                assertThat(serverTransport.unauthenticatedDatagrams()).isZero();
            } finally {
                client.disposeNow();
            }
        });
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            homa.security.mode=sign                                                  | homa.security.mode        | must be one of off, authenticate, encrypt
            homa.security.mode=authenticate                                          | homa.security.keys        | must hold at least one key
            homa.security.mode=encrypt;homa.security.keys.1=not*base64               | homa.security.keys.1      | must be the base64 of a 32-byte key
            homa.security.mode=encrypt;homa.security.keys.1=AAAA                     | homa.security.keys.1      | was 3 bytes
            homa.security.keys.256=KEY_1;homa.security.active-key=256                | homa.security.keys.256    | key id (after homa.security.keys.) must be between 0 and 255
            homa.security.keys.x=KEY_1                                               | homa.security.keys.x      | must be between 0 and 255
            homa.security.mode=authenticate;homa.security.keys.1=KEY_1               | homa.security.active-key  | must be the id of one of the keys in homa.security.keys [1]
            homa.security.mode=authenticate;homa.security.keys.1=KEY_1;homa.security.active-key=2 | homa.security.active-key | must be the id of one of the keys
            homa.security.active-key=300                                             | homa.security.active-key  | must be between 0 and 255
            homa.security.mode=authenticate;homa.security.keys.1=KEY_1;homa.security.active-key=1;homa.protocol.mtu=290 | homa.protocol.mtu | between 297 and 65535
            """)
    void shouldFailStartUpOnBadSecuritySettings(String properties, String property, String reason) {
        String[] values = properties.replace("KEY_1", KEY_1).split(";");
        this.contextRunner.withPropertyValues(values).run((context) -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining("Property " + property + " with value")
                    .hasMessageContaining(reason)
                    .hasMessageNotContaining(KEY_1);
        });
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            127.0.0.1
            127.0.0.1:
            127.0.0.1:http
            127.0.0.1:0
            127.0.0.1:65536
            :4000
            ::1:4000
            """)
    void shouldFailStartUpOnMalformedPeer(String value) {
        this.contextRunner.withPropertyValues("homa.client.peers.Kv=" + value).run((context) -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining("homa.client.peers.Kv")
                    .hasMessageContaining("comma-separated host:port with a port between 1 and 65535");
        });
    }

    @Test
    void shouldAddCodecBeansToTheRegistryAndBackOffForAUserResolver() {
        this.contextRunner.withUserConfiguration(UserBeansConfiguration.class)
                .withPropertyValues("homa.client.codec=user")
                .run((context) -> {
                    PayloadCodecs codecs = context.getBean(PayloadCodecs.class);
                    assertThat(codecs.names()).containsExactly("json", "smile", "cbor", "user");
                    assertThat(codecs.get("user")).isSameAs(UserBeansConfiguration.CODEC);
                    assertThat(context.getBean(HomaClient.class).defaultCodec()).isSameAs(UserBeansConfiguration.CODEC);
                    assertThat(context).hasSingleBean(ServiceResolver.class);
                    assertThat(context.getBean(ServiceResolver.class).resolve("anything").block())
                            .isEqualTo(UserBeansConfiguration.ENDPOINT);
                    assertThat(context).hasSingleBean(HomaClient.class);
                });
    }

    @Test
    void shouldBackOffWhenUserDefinesTransportConfig() {
        this.contextRunner.withPropertyValues("homa.protocol.mtu=9000")
                .withBean(HomaTransportConfig.class, () -> HomaTransportConfig.builder()
                        .bindAddress("127.0.0.1")
                        .engine(EngineConfig.builder().mtuBytes(2000).build())
                        .build())
                .run((context) -> {
                    assertThat(context).hasSingleBean(HomaTransportConfig.class);
                    assertThat(context.getBean(HomaTransportConfig.class).engine().mtuBytes()).isEqualTo(2000);
                });
    }

    @Test
    void shouldEncodeWithTheApplicationJsonMapper() {
        this.contextRunner
                .withBean(JsonMapper.class, () -> JsonMapper.builder()
                        .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
                        .build())
                .run((context) -> {
                    byte[] json = context.getBean(PayloadCodecs.class).get("json").encode(new Person("Ada", "Lovelace"));
                    assertThat(new String(json, StandardCharsets.UTF_8)).contains("\"first_name\":\"Ada\"");
                });
    }

    @Test
    void shouldEncodeWithADefaultJsonMapperOtherwise() {
        this.contextRunner.run((context) -> {
            PayloadCodec codec = context.getBean(PayloadCodecs.class).get("json");
            byte[] json = codec.encode(new Person("Ada", "Lovelace"));
            assertThat(new String(json, StandardCharsets.UTF_8)).contains("\"firstName\":\"Ada\"");
            assertThat(codec.decode(json, Person.class)).isEqualTo(new Person("Ada", "Lovelace"));
        });
    }

    @Test
    void shouldNotExportServicesWhenServerIsDisabled() {
        this.contextRunner.withPropertyValues("homa.server.enabled=false").run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(HomaServiceRegistrar.class);
            assertThat(context).hasSingleBean(HomaTransport.class);
            assertThat(context).hasSingleBean(HomaClient.class);
        });
    }

    @Test
    void shouldOfferOnlyTheCodecsWhoseDataformatIsOnTheClasspath() {
        this.contextRunner.withClassLoader(new FilteredClassLoader("tools.jackson.dataformat.smile")).run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(PayloadCodecs.class).names()).containsExactly("json", "cbor");
            assertThat(context.getBean(RpcDispatcher.class).codecs().names()).as("homa.server.codecs by default")
                    .containsExactly("json", "cbor");
        });
        this.contextRunner.withClassLoader(new FilteredClassLoader("tools.jackson.dataformat")).run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(RpcDispatcher.class).codecs().names()).containsExactly("json");
            assertThat(context.getBean(HomaClient.class).defaultCodec().name()).isEqualTo("json");
        });
        this.contextRunner.run((context) -> assertThat(context.getBean(RpcDispatcher.class).codecs().names())
                .as("with both dataformats").containsExactly("json", "smile", "cbor"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            homa.client.codec             | smile      | tools.jackson.dataformat:jackson-dataformat-smile
            homa.client.services.kv.codec | smile      | tools.jackson.dataformat:jackson-dataformat-smile
            homa.server.codecs            | json,smile | tools.jackson.dataformat:jackson-dataformat-smile
            homa.client.codec             | cbor       | tools.jackson.dataformat:jackson-dataformat-cbor
            """)
    void shouldFailStartUpNamingTheDependencyOfACodecWhoseDataformatIsMissing(String property, String value,
            String dependency) {
        this.contextRunner.withClassLoader(new FilteredClassLoader("tools.jackson.dataformat"))
                .withPropertyValues(property + "=" + value)
                .run((context) -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .hasMessageContaining("Property " + property + " with value '" + value + "' is invalid")
                            .hasMessageContaining("needs " + dependency + " on the classpath: add that dependency")
                            .hasMessageContaining("codecs available now: json");
                });
    }

    @Test
    void shouldBackOffWithoutHomaReactiveOnTheClasspath() {
        this.contextRunner.withClassLoader(new FilteredClassLoader(HomaTransport.class)).run((context) -> {
            assertThat(context).doesNotHaveBean(HomaTransport.class);
            assertThat(context).doesNotHaveBean(HomaClient.class);
            assertThat(context).doesNotHaveBean(HomaProperties.class);
        });
    }

    @Test
    void shouldRotateOverSeveralPeersOfAService() {
        this.contextRunner.withPropertyValues("homa.client.peers.Kv=127.0.0.1:4100, 127.0.0.1:4101,[::1]:4102")
                .run((context) -> {
                    ServiceResolver resolver = context.getBean(ServiceResolver.class);
                    List<InetSocketAddress> seen = new ArrayList<>();
                    for (int i = 0; i < 6; i++) {
                        seen.add(resolver.resolve("Kv").block());
                    }
                    InetSocketAddress a = new InetSocketAddress("127.0.0.1", 4100);
                    InetSocketAddress b = new InetSocketAddress("127.0.0.1", 4101);
                    InetSocketAddress c = new InetSocketAddress("::1", 4102);
                    assertThat(seen).containsExactly(a, b, c, a, b, c);
                    assertThat(context.getBean(HomaProperties.class).getClient().peerAddresses())
                            .containsEntry("Kv", List.of(a, b, c));
                });
    }

    @Test
    void shouldConfigureTheClientFromProperties() {
        this.contextRunner.run((context) -> {
            HomaClient client = context.getBean(HomaClient.class);
            assertThat(client.defaultTimeout()).isEqualTo(Duration.ofSeconds(10));
            assertThat(client.defaultCodec().name()).isEqualTo("json");
            assertThat(client.interceptors()).isEmpty();
        });
        this.contextRunner.withPropertyValues("homa.client.default-timeout=250", "homa.client.codec=cbor")
                .run((context) -> {
                    HomaClient client = context.getBean(HomaClient.class);
                    assertThat(client.defaultTimeout()).isEqualTo(Duration.ofMillis(250));
                    assertThat(client.defaultCodec().name()).isEqualTo("cbor");
                });
        this.contextRunner.withPropertyValues("homa.client.default-timeout=0").run((context) -> {
            Duration timeout = context.getBean(HomaClient.class).defaultTimeout();
            assertThat(timeout == null || timeout.isZero()).as("no default deadline, was %s", timeout).isTrue();
        });
    }

    @Test
    void shouldGiveTheClientEveryInterceptorBeanInOrder() {
        this.contextRunner.withUserConfiguration(InterceptorConfiguration.class).run((context) -> {
            assertThat(context.getBean(HomaClient.class).interceptors()).containsExactly(
                    InterceptorConfiguration.FIRST, InterceptorConfiguration.SECOND);
        });
    }

    @Test
    void shouldBackOffForEveryUserDefinedBean() {
        this.contextRunner.withUserConfiguration(ReplacementConfiguration.class).run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(PayloadCodecs.class)).isSameAs(context.getBean("myCodecs"));
            assertThat(context.getBean(RpcDispatcher.class)).isSameAs(context.getBean("myDispatcher"));
            assertThat(context.getBean(HomaClient.class)).isSameAs(context.getBean("myClient"));
            assertThat(context.getBean(HomaServiceProxyFactory.class)).isSameAs(context.getBean("myProxyFactory"));
            assertThat(context.getBean(HomaEndpointLifecycle.class)).isSameAs(context.getBean("myLifecycle"));
            assertThat(context).hasSingleBean(PayloadCodecs.class).hasSingleBean(RpcDispatcher.class)
                    .hasSingleBean(HomaClient.class).hasSingleBean(HomaServiceProxyFactory.class)
                    .hasSingleBean(HomaEndpointLifecycle.class);
        });
    }

    @Test
    void shouldMapServerSettings() {
        this.contextRunner.withPropertyValues("homa.server.codecs=cbor", "homa.server.shutdown-grace-period=3",
                        "homa.server.shutdown-ack-timeout=500ms")
                .run((context) -> {
                    HomaProperties properties = context.getBean(HomaProperties.class);
                    assertThat(properties.getServer().getCodecs()).containsExactly("cbor");
                    assertThat(properties.getServer().getShutdownGracePeriod()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(properties.getServer().getShutdownAckTimeout()).isEqualTo(Duration.ofMillis(500));
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class InterceptorConfiguration {

        static final HomaClientInterceptor FIRST = new PassThrough();

        static final HomaClientInterceptor SECOND = new PassThrough();

        @Bean
        @Order(2)
        HomaClientInterceptor second() {
            return SECOND;
        }

        @Bean
        @Order(1)
        HomaClientInterceptor first() {
            return FIRST;
        }

        static final class PassThrough implements HomaClientInterceptor {

            @Override
            public <T> Mono<T> interceptUnary(RpcCall call, Mono<T> next) {
                return next;
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class ReplacementConfiguration {

        @Bean
        PayloadCodecs myCodecs() {
            return PayloadCodecs.defaults();
        }

        @Bean
        RpcDispatcher myDispatcher(PayloadCodecs codecs) {
            return new RpcDispatcher(codecs, Schedulers.immediate());
        }

        @Bean
        HomaClient myClient(HomaTransport transport) {
            return HomaClient.builder(transport).resolver((service) -> Mono.empty()).build();
        }

        @Bean
        HomaServiceProxyFactory myProxyFactory(HomaClient client) {
            return new HomaServiceProxyFactory(client, new HomaProperties.Client(), List.of("json"), (value) -> value);
        }

        @Bean
        HomaEndpointLifecycle myLifecycle(HomaTransport transport, RpcDispatcher dispatcher) {
            return new HomaEndpointLifecycle(transport, dispatcher, Duration.ZERO);
        }
    }

    record Person(String firstName, String lastName) {
    }

    @Configuration(proxyBeanMethods = false)
    static class UserBeansConfiguration {

        static final InetSocketAddress ENDPOINT = new InetSocketAddress("127.0.0.1", 4999);

        static final PayloadCodec CODEC = new PayloadCodec() {
            @Override
            public String name() {
                return "user";
            }

            @Override
            public byte[] encode(Object value) {
                return new byte[] {1};
            }

            @Override
            public Object decode(byte[] bytes, Type type) {
                return "decoded";
            }
        };

        @Bean
        PayloadCodec userCodec() {
            return CODEC;
        }

        @Bean
        ServiceResolver userResolver() {
            return (service) -> Mono.just(ENDPOINT);
        }
    }

    @Test
    void shouldBoundMaxIncomingByThePayloadOfOnePacketAtTheConfiguredMtu() {
        this.contextRunner.withPropertyValues("homa.protocol.mtu=9000", "homa.protocol.max-incoming=8915B")
                .run((context) -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .hasMessageContaining("homa.protocol.max-incoming")
                            .hasMessageContaining("(8916..1073741824 bytes)");
                });
        this.contextRunner.withPropertyValues("homa.protocol.mtu=9000", "homa.protocol.max-incoming=8916B")
                .run((context) -> assertThat(context.getBean(HomaTransportConfig.class).engine().maxIncomingBytes())
                        .isEqualTo(8916));
    }

    @Test
    void shouldFailStartUpWhenPeersWouldBeForgottenBeforeTheirRpcsEnd() {
        this.contextRunner
                .withPropertyValues("homa.protocol.peer-silence-timeout=15s",
                        "homa.protocol.peer-idle-timeout=20s")
                .run((context) -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .hasMessageContaining("homa.protocol.peer-idle-timeout")
                            .hasMessageContaining("exceed 2 x peer-silence-timeout (30000 ms)");
                });
    }
}
