package io.homa.reactive.internal.transport;

import io.netty.channel.ChannelOption;
import org.jspecify.annotations.Nullable;

/**
 * What Netty's native epoll transport offers for UDP, looked up by reflection because its
 * classes are a runtime-only dependency (absent on macOS and Windows builds): scattering reads
 * (recvmmsg), segmentation offload on send (UDP GSO, {@code UDP_SEGMENT}) and generic receive
 * offload ({@code UDP_GRO}). Everything here is null or false where epoll is missing.
 */
final class UdpOffload {
    /** {@code EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE}: with it, reads use recvmmsg(2). */
    static final @Nullable ChannelOption<Integer> MAX_DATAGRAM_PAYLOAD_SIZE = option("MAX_DATAGRAM_PAYLOAD_SIZE");
    /**
     * {@code EpollChannelOption.UDP_GRO}: the kernel hands back coalesced datagrams, Netty splits
     * them. Only with recvmsg(2) reads: Netty's recvmmsg passes no control buffer, so a coalesced
     * run would come up as one datagram holding all its segments.
     */
    static final @Nullable ChannelOption<Boolean> UDP_GRO = option("UDP_GRO");
    /** {@code EpollChannelOption.SO_REUSEPORT}: sockets of one process share a port, the kernel hashing each datagram's 4-tuple to one. */
    static final @Nullable ChannelOption<Boolean> SO_REUSEPORT = option("SO_REUSEPORT");
    /** Whether the native library and the kernel support UDP_SEGMENT (Linux 4.18+). */
    static final boolean GSO_SUPPORTED = gsoSupported();

    private UdpOffload() {}

    /** Whether the channel class is Netty's native epoll datagram channel. */
    static boolean isEpoll(Class<?> channelType) {
        return "EpollDatagramChannel".equals(channelType.getSimpleName());
    }

    @SuppressWarnings("unchecked")
    private static <T> @Nullable ChannelOption<T> option(String name) {
        try {
            return (ChannelOption<T>) Class.forName("io.netty.channel.epoll.EpollChannelOption").getField(name).get(null);
        } catch (ReflectiveOperationException | LinkageError e) {
            return null;
        }
    }

    /** Whether Netty's native epoll transport loads here ({@code Epoll.isAvailable()}). */
    static boolean epollAvailable() {
        try {
            return (Boolean) Class.forName("io.netty.channel.epoll.Epoll").getMethod("isAvailable").invoke(null);
        } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
            return false;
        }
    }

    private static boolean gsoSupported() {
        try {
            return (Boolean) Class.forName("io.netty.channel.epoll.SegmentedDatagramPacket")
                    .getMethod("isSupported").invoke(null);
        } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
            return false;
        }
    }
}
