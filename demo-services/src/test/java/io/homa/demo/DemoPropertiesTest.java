package io.homa.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.Test;
import org.springframework.boot.DefaultApplicationArguments;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** Binds arguments the way Spring Boot binds {@link DemoProperties}: top-level names, relaxed. */
class DemoPropertiesTest {

    @Test
    void shouldBindDefaultsWhenNoArgumentIsGiven() {
        DemoProperties properties = bind(Map.of());

        assertThat(properties).isEqualTo(DemoProperties.defaults());
        assertThat(properties.mode()).isEqualTo(DemoProperties.Mode.LOCAL);
        assertThat(properties.duration()).isEqualTo(Duration.ofSeconds(10));
        assertThat(properties.concurrency()).isEqualTo(16);
        assertThat(properties.workload()).isEqualTo("w3");
        assertThat(properties.port()).isEqualTo(4000);
        assertThat(properties.peer()).isNull();
        assertThat(properties.kvShards()).isEqualTo(3);
    }

    @Test
    void shouldBindTopLevelArguments() {
        DemoProperties properties = bind(Map.of(
                "mode", "client", "peer", "10.0.0.2:4000", "duration", "2", "concurrency", "4",
                "workload", "W1", "seed", "99", "warmup", "500ms", "probe-samples", "5", "rpc-timeout", "3s",
                "kv-shards", "5"));

        assertThat(properties.mode()).isEqualTo(DemoProperties.Mode.CLIENT);
        assertThat(properties.duration()).as("bare numbers are seconds").isEqualTo(Duration.ofSeconds(2));
        assertThat(properties.concurrency()).isEqualTo(4);
        assertThat(properties.workload()).isEqualTo("w1");
        assertThat(properties.seed()).isEqualTo(99);
        assertThat(properties.warmup()).isEqualTo(Duration.ofMillis(500));
        assertThat(properties.probeSamples()).isEqualTo(5);
        assertThat(properties.rpcTimeout()).isEqualTo(Duration.ofSeconds(3));
        assertThat(properties.kvShards()).isEqualTo(5);
        assertThat(properties.peerAddress().getHostString()).isEqualTo("10.0.0.2");
        assertThat(properties.peerAddress().getPort()).isEqualTo(4000);
    }

    @Test
    void shouldRejectBadArgumentsNamingThem() {
        assertBindFails(Map.of("workload", "w9"), "--workload must be one of w1, w2, w3, w4, w5, was 'w9'");
        assertBindFails(Map.of("concurrency", "0"), "--concurrency must be between 1 and 1024, was 0");
        assertBindFails(Map.of("concurrency", "5000"), "--concurrency must be between 1 and 1024, was 5000");
        assertBindFails(Map.of("duration", "0s"), "--duration must be between");
        assertBindFails(Map.of("port", "70000"), "--port must be between 0 and 65535, was 70000");
        assertBindFails(Map.of("kv-shards", "0"), "--kv-shards must be between 1 and 16, was 0");
        assertBindFails(Map.of("kv-shards", "17"), "--kv-shards must be between 1 and 16, was 17");
        assertBindFails(Map.of("mode", "client"), "--peer=host:port is required with --mode=client");
        assertBindFails(Map.of("mode", "client", "peer", "nohost"), "--peer must be host:port");
        assertBindFails(Map.of("mode", "client", "peer", "h:0"), "--peer must be host:port");
        assertBindFails(Map.of("peer", "h:1"), "--peer is only used with --mode=client");
        assertBindFails(Map.of("probe-samples", "0"), "--probe-samples must be between 1 and 10000");
        assertBindFails(Map.of("warmup", "-1s"), "--warmup must be between");
    }

    @Test
    void shouldBindTheShardAndWatchModes() {
        DemoProperties shard = bind(Map.of("mode", "shard", "shard", "1"));
        assertThat(shard.mode()).isEqualTo(DemoProperties.Mode.SHARD);
        assertThat(shard.shard()).isEqualTo(1);
        DemoProperties watch = bind(Map.of("mode", "watch", "kv-shards", "2", "duration", "60s"));
        assertThat(watch.mode()).isEqualTo(DemoProperties.Mode.WATCH);
        assertThat(watch.shard()).isNull();
        assertThat(watch.kvShards()).isEqualTo(2);

        assertBindFails(Map.of("mode", "shard"), "--shard=0..15 is required with --mode=shard");
        assertBindFails(Map.of("mode", "shard", "shard", "16"), "--shard must be between 0 and 15, was 16");
        assertBindFails(Map.of("mode", "shard", "shard", "-1"), "--shard must be between 0 and 15, was -1");
        assertBindFails(Map.of("mode", "watch", "shard", "1"), "--shard is only used with --mode=shard, but --mode was watch");
        assertBindFails(Map.of("shard", "0"), "--shard is only used with --mode=shard, but --mode was local");
    }

    @Test
    void shouldBindTheHeadOfLineMode() {
        DemoProperties properties = bind(Map.of("mode", "hol", "duration", "3s"));

        assertThat(properties.mode()).isEqualTo(DemoProperties.Mode.HOL);
        assertThat(properties.duration()).isEqualTo(Duration.ofSeconds(3));
        assertBindFails(Map.of("mode", "hol", "peer", "h:1"), "--peer is only used with --mode=client, but --mode was hol");
    }

    @Test
    void shouldRejectAnUnknownMode() {
        assertThatThrownBy(() -> bind(Map.of("mode", "both"))).isInstanceOf(BindException.class)
                .hasMessageContaining("mode");
    }

    @Test
    void shouldAcceptIpv6Peers() {
        DemoProperties properties = bind(Map.of("mode", "client", "peer", "[::1]:4000"));

        assertThat(properties.peerAddress().getHostString()).isEqualTo("::1");
        assertThat(properties.peerAddress().getPort()).isEqualTo(4000);
    }

    @Test
    void shouldRejectMisspeltOptionsButAllowPropertyPaths() {
        DemoProperties.checkOptionNames(options("--duration=1s", "--probe-samples=3", "--probeSamples=3",
                "--homa.server.port=0", "--debug"));

        assertThatThrownBy(() -> DemoProperties.checkOptionNames(options("--durration=5s")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("unknown option --durration; the options are --concurrency, --duration");
    }

    private static List<String> options(String... args) {
        return List.copyOf(new DefaultApplicationArguments(args).getOptionNames());
    }

    private static DemoProperties bind(Map<String, String> arguments) {
        Binder binder = new Binder(new MapConfigurationPropertySource(arguments));
        return binder.bindOrCreate("", Bindable.of(DemoProperties.class));
    }

    private static void assertBindFails(Map<String, String> arguments, String message) {
        ThrowableAssert.ThrowingCallable bind = () -> bind(arguments);
        assertThatThrownBy(bind).isInstanceOf(BindException.class)
                .rootCause().isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }
}
