package io.homa.grpc.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;

import com.google.protobuf.StringValue;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.homa.reactive.HomaTransport;
import io.homa.spring.HomaAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.grpc.client.GrpcChannelFactory;
import org.springframework.grpc.server.GrpcServerFactory;

/** {@link HomaGrpcAutoConfiguration}: its beans, their conditions, {@code homa.grpc.*} and the targets. */
class HomaGrpcAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(HomaAutoConfiguration.class, HomaGrpcAutoConfiguration.class))
            .withPropertyValues("homa.server.port=0", "homa.server.bind-address=127.0.0.1", "homa.transport.loops=1");

    @Test
    void aChannelFactoryForHomaTargetsOnlyAndNoServerWithoutServices() {
        runner.run((context) -> {
            assertThat(context).hasSingleBean(HomaGrpcChannelFactory.class).doesNotHaveBean(GrpcServerFactory.class);
            GrpcChannelFactory factory = context.getBean(GrpcChannelFactory.class);
            assertThat(factory.supports("homa://127.0.0.1:4000")).isTrue();
            assertThat(factory.supports("HOMA://orders")).isTrue();
            assertThat(factory.supports("localhost:9090")).isFalse();
            assertThat(factory.supports("dns:///orders:9090")).isFalse();
            assertThat(factory.supports("static://127.0.0.1:9090")).isFalse();
        });
    }

    @Test
    void servesBindableServiceBeansOnTheHomaPort() {
        runner.withBean(Greeter.class).run((context) -> {
            HomaGrpcServerFactory factory = context.getBean(HomaGrpcServerFactory.class);
            assertThat(factory.services()).extracting((service) -> service.getServiceDescriptor().getName())
                    .containsExactly(Greeter.SERVICE);
            assertThat(factory.createServer().getPort())
                    .isEqualTo(context.getBean(HomaTransport.class).localAddress().getPort());
        });
    }

    @Test
    void homaGrpcServerEnabledFalseLeavesTheServiceBeansToAnotherServer() {
        runner.withBean(Greeter.class).withPropertyValues("homa.grpc.server.enabled=false")
                .run((context) -> assertThat(context).doesNotHaveBean(GrpcServerFactory.class)
                        .hasSingleBean(HomaGrpcChannelFactory.class));
    }

    @Test
    void aServiceNameTargetIsResolvedByTheServiceResolver() {
        runner.withBean(Greeter.class).run((server) -> {
            int port = server.getBean(HomaTransport.class).localAddress().getPort();
            runner.withPropertyValues("homa.client.peers.greeter=127.0.0.1:" + port).run((client) -> {
                ManagedChannel channel = client.getBean(GrpcChannelFactory.class).createChannel("homa://greeter");
                try {
                    assertThat(channel.authority()).isEqualTo("greeter");
                    assertThat(Greeter.BlockingStub.of(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                            .sayHello(StringValue.of("by name")).getValue()).isEqualTo("Hello, by name");
                } finally {
                    channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
                }
                assertThatThrownBy(() -> client.getBean(GrpcChannelFactory.class).createChannel("homa://unknown"))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("'unknown'");
            });
        });
    }

    @Test
    void theDefaultDeadlineAppliesToCallsThatSetNone() {
        runner.withBean(Greeter.class).withPropertyValues("homa.grpc.client.default-deadline=200ms").run((context) -> {
            int port = context.getBean(HomaTransport.class).localAddress().getPort();
            ManagedChannel channel = context.getBean(GrpcChannelFactory.class).createChannel("homa://127.0.0.1:" + port);
            try {
                assertThatThrownBy(() -> Greeter.BlockingStub.of(channel).hang(StringValue.of("forever")))
                        .isInstanceOfSatisfying(StatusRuntimeException.class, (ex) ->
                                assertThat(ex.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
                // a stub's own deadline wins
                assertThat(Greeter.BlockingStub.of(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                        .sayHello(StringValue.of("own deadline")).getValue()).isEqualTo("Hello, own deadline");
            } finally {
                channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
        });
    }

    @Test
    void aPropertyOutOfRangeFailsStartUpNamingItAndItsRange() {
        runner.withPropertyValues("homa.grpc.client.default-deadline=-1s").run((context) ->
                assertThat(context).getFailure().rootCause()
                        .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                        .hasMessageContaining("homa.grpc.client.default-deadline")
                        .hasMessageContaining("0s..1d"));
        runner.withPropertyValues("homa.grpc.client.resolve-timeout=0s").run((context) ->
                assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("homa.grpc.client.resolve-timeout")
                        .hasMessageContaining("1ms..1d"));
    }

    @Test
    void targetsAreHostAndPortOrAServiceName() {
        assertThat(HomaGrpcChannelFactory.Target.parse("homa://127.0.0.1:4000"))
                .isEqualTo(new HomaGrpcChannelFactory.Target("127.0.0.1:4000", "127.0.0.1", 4000));
        assertThat(HomaGrpcChannelFactory.Target.parse("homa://[::1]:4000/"))
                .isEqualTo(new HomaGrpcChannelFactory.Target("[::1]:4000", "::1", 4000));
        assertThat(HomaGrpcChannelFactory.Target.parse("homa://orders"))
                .isEqualTo(new HomaGrpcChannelFactory.Target("orders", "orders", 0));
        for (String bad : new String[] {"homa:", "homa://", "homa:orders", "homa://h:x", "homa://[::1]",
                "homa://h:1/path", "dns:///h:1"}) {
            assertThatIllegalArgumentException().as(bad).isThrownBy(() -> HomaGrpcChannelFactory.Target.parse(bad))
                    .withMessageContaining("homa://host:port or homa://service-name");
        }
        assertThatIllegalArgumentException().isThrownBy(() -> HomaGrpcChannelFactory.Target.parse("homa://h:0"))
                .withMessageContaining("1 to 65535");
    }
}
