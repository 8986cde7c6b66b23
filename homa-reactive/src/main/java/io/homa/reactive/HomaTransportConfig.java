package io.homa.reactive;

import io.homa.engine.EngineConfig;
import java.util.Objects;

/**
 * Settings of one {@link HomaTransport}: where it binds, socket sizes and the protocol settings
 * of its engine. Validated on construction: a bad value fails with an
 * {@link IllegalArgumentException} naming it and its allowed range.
 *
 * @param bindAddress host or IP to bind the UDP socket to, e.g. {@code "0.0.0.0"} or
 *     {@code "127.0.0.1"}; default {@code "0.0.0.0"}
 * @param port UDP port = Homa port, 0..65535; 0 picks a free one; default 0
 * @param receiveBufferBytes SO_RCVBUF: loopback drops datagrams when it overflows, and a 1 MiB
 *     message is ~750 packets; the kernel caps it at {@code net.core.rmem_max}. 64 KiB..1 GiB,
 *     default 4 MiB
 * @param sendBufferBytes SO_SNDBUF, 64 KiB..1 GiB, default 4 MiB
 * @param nativeTransport whether to use Netty's native epoll transport when it is available
 *     (Linux); NIO otherwise. Default true
 * @param engine protocol settings
 */
public record HomaTransportConfig(
        String bindAddress,
        int port,
        int receiveBufferBytes,
        int sendBufferBytes,
        boolean nativeTransport,
        EngineConfig engine) {

    public static final String DEFAULT_BIND_ADDRESS = "0.0.0.0";
    public static final int DEFAULT_SOCKET_BUFFER_BYTES = 4 * 1024 * 1024;

    public HomaTransportConfig {
        Objects.requireNonNull(bindAddress, "bind-address must not be null");
        Objects.requireNonNull(engine, "engine must not be null");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be between 0 and 65535, was " + port);
        }
        checkBuffer("receive-buffer-size", receiveBufferBytes);
        checkBuffer("send-buffer-size", sendBufferBytes);
    }

    private static void checkBuffer(String name, int value) {
        if (value < 64 * 1024 || value > 1 << 30) {
            throw new IllegalArgumentException(
                    name + " must be between 65536 and 1073741824 bytes, was " + value);
        }
    }

    /** The defaults: any address, free port, 4 MiB socket buffers, native transport, engine defaults. */
    public static HomaTransportConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Mutable builder; {@link #build()} validates. */
    public static final class Builder {
        private String bindAddress = DEFAULT_BIND_ADDRESS;
        private int port;
        private int receiveBufferBytes = DEFAULT_SOCKET_BUFFER_BYTES;
        private int sendBufferBytes = DEFAULT_SOCKET_BUFFER_BYTES;
        private boolean nativeTransport = true;
        private EngineConfig engine = EngineConfig.defaults();

        private Builder() {}

        public Builder bindAddress(String value) {
            this.bindAddress = value;
            return this;
        }

        public Builder port(int value) {
            this.port = value;
            return this;
        }

        public Builder receiveBufferBytes(int value) {
            this.receiveBufferBytes = value;
            return this;
        }

        public Builder sendBufferBytes(int value) {
            this.sendBufferBytes = value;
            return this;
        }

        public Builder nativeTransport(boolean value) {
            this.nativeTransport = value;
            return this;
        }

        public Builder engine(EngineConfig value) {
            this.engine = value;
            return this;
        }

        public HomaTransportConfig build() {
            return new HomaTransportConfig(
                    bindAddress, port, receiveBufferBytes, sendBufferBytes, nativeTransport, engine);
        }
    }
}
