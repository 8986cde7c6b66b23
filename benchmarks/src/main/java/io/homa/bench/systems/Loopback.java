package io.homa.bench.systems;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;

/** Loopback addresses (IPv4 127.0.0.1, so every system uses the same path). */
final class Loopback {
    static final String HOST = "127.0.0.1";

    private Loopback() {}

    static InetAddress address() {
        try {
            return InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    static InetSocketAddress socket(int port) {
        return new InetSocketAddress(address(), port);
    }

    static InetSocketAddress[] sockets(List<Integer> ports) {
        return ports.stream().map(Loopback::socket).toArray(InetSocketAddress[]::new);
    }
}
