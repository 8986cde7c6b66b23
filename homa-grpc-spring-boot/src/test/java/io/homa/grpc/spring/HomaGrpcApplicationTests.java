package io.homa.grpc.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import com.google.protobuf.StringValue;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.ForwardingServerCall;
import io.grpc.stub.MetadataUtils;
import io.homa.spring.LocalHomaPort;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.grpc.client.ChannelBuilderOptions;
import org.springframework.grpc.client.GlobalClientInterceptor;
import org.springframework.grpc.client.GrpcChannelFactory;
import org.springframework.grpc.server.GlobalServerInterceptor;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;
import org.springframework.context.event.EventListener;

/**
 * A spring-grpc application over Homa: a {@code BindableService} bean served on the Homa endpoint,
 * called through a blocking stub on a channel from the {@link GrpcChannelFactory} for
 * {@code homa://127.0.0.1:<port>}, with a global server interceptor (a tenant header required,
 * echoed in a trailer), a global client interceptor, and deadlines.
 */
@SpringBootTest(properties = { "homa.server.port=0", "homa.server.bind-address=127.0.0.1",
        "homa.transport.loops=1", "spring.main.banner-mode=off" })
class HomaGrpcApplicationTests {

    static final Metadata.Key<String> TENANT = Metadata.Key.of("x-tenant", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> TENANT_ECHO = Metadata.Key.of("x-tenant-echo", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> CLIENT = Metadata.Key.of("x-client", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> CLIENT_ECHO = Metadata.Key.of("x-client-echo", Metadata.ASCII_STRING_MARSHALLER);

    @Autowired
    GrpcChannelFactory channels;

    @Autowired
    Greeter greeter;

    @Autowired
    App app;

    @LocalHomaPort
    int port;

    private ManagedChannel channel;

    @AfterEach
    void shutdown() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    private Greeter.BlockingStub stub(String tenant) {
        ClientInterceptor attach = tenant == null ? null : MetadataUtils.newAttachHeadersInterceptor(headers(tenant));
        channel = channels.createChannel("homa://127.0.0.1:" + port,
                ChannelBuilderOptions.defaults().withInterceptors(attach == null ? List.of() : List.of(attach)));
        return Greeter.BlockingStub.of(channel);
    }

    private static Metadata headers(String tenant) {
        Metadata headers = new Metadata();
        headers.put(TENANT, tenant);
        return headers;
    }

    @Test
    void callsTheServiceBeanOverHomaOnTheHomaPort() {
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        StringValue reply = stub("acme")
                .withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(new AtomicReference<>(), trailers))
                .withDeadlineAfter(30, TimeUnit.SECONDS)
                .sayHello(StringValue.of("Homa"));

        assertThat(reply.getValue()).isEqualTo("Hello, Homa");
        assertThat(trailers.get().get(TENANT_ECHO)).isEqualTo("acme");
        // the @GlobalClientInterceptor bean ran on the factory's channel
        assertThat(trailers.get().get(CLIENT_ECHO)).isEqualTo("spring");
        assertThat(channels.supports("homa://127.0.0.1:" + port)).isTrue();
        assertThat(app.startedPort).isEqualTo(port);
    }

    @Test
    void theServerInterceptorRejectsACallWithoutTheHeader() {
        assertThatThrownBy(() -> stub(null).sayHello(StringValue.of("nobody")))
                .isInstanceOfSatisfying(StatusRuntimeException.class, (ex) -> {
                    assertThat(ex.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
                    assertThat(ex.getStatus().getDescription()).isEqualTo("x-tenant is required");
                });
    }

    @Test
    void aCallPastItsDeadlineFailsWithDeadlineExceededAndIsCancelledAtTheServer() throws InterruptedException {
        assertThatThrownBy(() -> stub("acme").withDeadlineAfter(200, TimeUnit.MILLISECONDS)
                .hang(StringValue.of("forever")))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        (ex) -> assertThat(ex.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
        assertThat(Greeter.await(greeter.hangCancelled)).isTrue();
    }

    @Test
    void aCallWithinItsDeadlineSucceeds() {
        assertThat(stub("acme").withDeadlineAfter(30, TimeUnit.SECONDS).sayHello(StringValue.of("in time")).getValue())
                .isEqualTo("Hello, in time");
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {

        volatile int startedPort;

        @Bean
        Greeter greeter() {
            return new Greeter();
        }

        /** Requires {@code x-tenant} and echoes it, and {@code x-client}, in the trailers. */
        @Bean
        @GlobalServerInterceptor
        ServerInterceptor tenantInterceptor() {
            return new ServerInterceptor() {
                @Override
                public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call,
                        Metadata headers, ServerCallHandler<ReqT, RespT> next) {
                    String tenant = headers.get(TENANT);
                    if (tenant == null) {
                        call.close(Status.UNAUTHENTICATED.withDescription("x-tenant is required"), new Metadata());
                        return new ServerCall.Listener<>() {
                        };
                    }
                    String client = headers.get(CLIENT);
                    return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                        @Override
                        public void close(Status status, Metadata trailers) {
                            trailers.put(TENANT_ECHO, tenant);
                            if (client != null) {
                                trailers.put(CLIENT_ECHO, client);
                            }
                            super.close(status, trailers);
                        }
                    }, headers);
                }
            };
        }

        /** Adds {@code x-client: spring} to every call of the factory's channels. */
        @Bean
        @GlobalClientInterceptor
        ClientInterceptor clientNameInterceptor() {
            return new ClientInterceptor() {
                @Override
                public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                        CallOptions options, Channel next) {
                    return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                        @Override
                        public void start(Listener<RespT> listener, Metadata headers) {
                            headers.put(CLIENT, "spring");
                            super.start(listener, headers);
                        }
                    };
                }
            };
        }

        @EventListener
        void started(GrpcServerStartedEvent event) {
            startedPort = event.getPort();
        }
    }
}
