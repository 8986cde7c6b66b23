package io.homa.reactive.internal.transport;

import io.netty.channel.ChannelOption;
import io.netty.util.Version;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
    /** {@code EpollChannelOption.UDP_GRO}: the kernel hands back coalesced datagrams, Netty splits them. */
    static final @Nullable ChannelOption<Boolean> UDP_GRO = option("UDP_GRO");
    /**
     * Whether Netty keeps the segment size of coalesced datagrams read with recvmmsg(2): from
     * 4.2.19 (netty/netty#17492). Before, recvmmsg passed no control buffer and a GRO batch came up
     * as one datagram holding all its segments, so with GRO on, older versions must read with
     * recvmsg(2), which always passes one.
     */
    static final boolean GRO_WITH_RECVMMSG = nettyEpollAtLeast(4, 2, 19);
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

    private static boolean nettyEpollAtLeast(int major, int minor, int patch) {
        Version version = Version.identify().get("netty-transport-classes-epoll");
        if (version == null) {
            return false;
        }
        Matcher m = Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+)").matcher(version.artifactVersion());
        if (!m.lookingAt()) {
            return false;
        }
        int[] found = {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))};
        int[] wanted = {major, minor, patch};
        return Arrays.compare(found, wanted) >= 0;
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
