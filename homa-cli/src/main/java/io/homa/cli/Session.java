package io.homa.cli;

import io.homa.reactive.HomaRemoteException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import io.homa.reactive.rpc.CallOptions;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.PayloadCodecs;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One run of the command: a Homa endpoint of its own on an ephemeral port (on the loopback
 * address when the peer is there, else on the wildcard) and a {@link HomaClient} that sends every
 * call to the peer, in JSON. Closing it closes the socket.
 */
final class Session implements AutoCloseable {

    /** The reflection service and its method (the starter's {@code HomaReflectionService}). */
    static final String REFLECTION_SERVICE = "homa.reflection";

    static final String REFLECTION_LIST = "list";

    private static final Duration BIND_TIMEOUT = Duration.ofSeconds(10);

    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(2);

    private final HomaTransport transport;

    private final HomaClient client;

    private final CallOptions options;

    private final InetSocketAddress peer;

    private Session(HomaTransport transport, HomaClient client, CallOptions options, InetSocketAddress peer) {
        this.transport = transport;
        this.client = client;
        this.options = options;
        this.peer = peer;
    }

    /**
     * Binds the endpoint.
     *
     * @throws picocli.CommandLine.ParameterException for a bad option
     */
    static Session open(ConnectionOptions connection, JsonMapper mapper) {
        InetSocketAddress peer = connection.peerAddress();
        CallOptions options = new CallOptions(connection.timeout, false, null, connection.checkedMetadata());
        InetAddress address = peer.getAddress();
        String bindAddress = address.isLoopbackAddress() ? address.getHostAddress()
                : (address instanceof java.net.Inet6Address) ? "::" : "0.0.0.0";
        HomaTransportConfig config = HomaTransportConfig.builder()
                .bindAddress(bindAddress)
                .port(0)
                .security(connection.security())
                .build();
        HomaTransport transport = HomaTransport.bindNow(config, null, BIND_TIMEOUT);
        HomaClient client = HomaClient.builder(transport)
                .resolver((service) -> Mono.just(peer))
                .codecs(PayloadCodecs.of(new CliJsonCodec(mapper)))
                .build();
        return new Session(transport, client, options, peer);
    }

    /** The endpoint called. */
    InetSocketAddress peer() {
        return this.peer;
    }

    /**
     * The peer's listing ({@code homa.reflection.list}).
     *
     * @throws io.homa.reactive.HomaException as the call failed (UNIMPLEMENTED: the peer serves no reflection)
     */
    JsonNode list() {
        JsonNode listing = this.client.call(REFLECTION_SERVICE, REFLECTION_LIST, new Object[0], JsonNode.class,
                this.options).block();
        if (listing == null || !listing.path("services").isArray()) {
            throw new HomaRemoteException(HomaStatus.INTERNAL, "the peer's " + REFLECTION_SERVICE + "."
                    + REFLECTION_LIST + " answered no listing: " + listing);
        }
        return listing;
    }

    /**
     * The listing's entry of {@code service.method}, or {@code null} when the peer serves no
     * reflection or does not list that method.
     *
     * @throws io.homa.reactive.HomaException when the listing fails otherwise (the peer is silent, ...)
     */
    @Nullable JsonNode describe(String service, String method) {
        JsonNode listing;
        try {
            listing = list();
        }
        catch (HomaRemoteException ex) {
            if (ex.status() == HomaStatus.UNIMPLEMENTED) {
                return null;
            }
            throw ex;
        }
        for (JsonNode entry : listing.path("services").values()) {
            if (service.equals(entry.path("name").asString(""))) {
                for (JsonNode candidate : entry.path("methods").values()) {
                    if (method.equals(candidate.path("name").asString(""))) {
                        return candidate;
                    }
                }
            }
        }
        return null;
    }

    /** A unary call; empty for a {@code null} result. */
    Mono<JsonNode> call(String service, String method, List<JsonNode> arguments) {
        return this.client.call(service, method, arguments.toArray(), JsonNode.class, this.options);
    }

    /** A streaming call: the items as they arrive. */
    Flux<JsonNode> stream(String service, String method, List<JsonNode> arguments) {
        return this.client.stream(service, method, arguments.toArray(), JsonNode.class, this.options);
    }

    @Override
    public void close() {
        this.transport.disposeNow(CLOSE_TIMEOUT);
    }
}
