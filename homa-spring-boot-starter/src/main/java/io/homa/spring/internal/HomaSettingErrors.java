package io.homa.spring.internal;

import io.homa.engine.InvalidSettingException;
import io.homa.spring.HomaProperties;
import io.homa.spring.HomaProtocolProperties;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.util.unit.DataSize;

/**
 * Turns an {@link InvalidSettingException} from the engine's or the transport's config builder
 * (where every protocol and transport setting is validated, once) into the start-up failure a
 * Spring Boot user expects: the {@code homa.*} property, its value as written, and its allowed
 * range in the property's own units ({@code 1B and 64MB}, {@code 1ms and 60s}).
 */
final class HomaSettingErrors {

    /** The engine's and transport's setting names, with the property each comes from. */
    private static final Map<String, Property> PROPERTIES = Map.ofEntries(
            protocol("mtu", HomaProtocolProperties::getMtu),
            protocol("unscheduled-bytes", HomaProtocolProperties::getUnscheduledBytes),
            protocol("max-message-size", HomaProtocolProperties::getMaxMessageSize),
            protocol("resend-interval", HomaProtocolProperties::getResendInterval),
            protocol("peer-silence-timeout", HomaProtocolProperties::getPeerSilenceTimeout),
            protocol("peer-idle-timeout", HomaProtocolProperties::getPeerIdleTimeout),
            protocol("max-inbound-buffer", HomaProtocolProperties::getMaxInboundBuffer),
            protocol("max-overcommit", HomaProtocolProperties::getMaxOvercommit),
            protocol("max-grants-per-peer", HomaProtocolProperties::getMaxGrantsPerPeer),
            protocol("max-incoming", HomaProtocolProperties::getMaxIncoming),
            protocol("fifo-grant-fraction", HomaProtocolProperties::getFifoGrantFraction),
            protocol("priority-levels", HomaProtocolProperties::getPriorityLevels),
            protocol("incast-threshold", HomaProtocolProperties::getIncastThreshold),
            protocol("incast-unscheduled-bytes", HomaProtocolProperties::getIncastUnscheduledBytes),
            protocol("incast-buffer-bytes", HomaProtocolProperties::getIncastBufferBytes),
            protocol("link-mbps", HomaProtocolProperties::getLinkMbps),
            protocol("max-nic-queue", HomaProtocolProperties::getMaxNicQueue),
            protocol("rtt-bytes", HomaProtocolProperties::getRttBytes),
            protocol("congestion-control", HomaProtocolProperties::getCongestionControl),
            protocol("rtt-probe-interval", HomaProtocolProperties::getRttProbeInterval),
            Map.entry("security.mode", new Property("homa.security.mode", (p) -> p.getSecurity().getMode())),
            Map.entry("security.active-key", new Property("homa.security.active-key",
                    (p) -> p.getSecurity().getActiveKey())),
            Map.entry("security.keys", new Property("homa.security.keys", (p) -> p.getSecurity().getKeys().keySet())),
            Map.entry("port", new Property("homa.server.port", (p) -> p.getServer().getPort())),
            Map.entry("bind-address", new Property("homa.server.bind-address", (p) -> p.getServer().getBindAddress())),
            Map.entry("receive-buffer-size", new Property("homa.transport.receive-buffer-size",
                    (p) -> p.getTransport().getReceiveBufferSize())),
            Map.entry("send-buffer-size", new Property("homa.transport.send-buffer-size",
                    (p) -> p.getTransport().getSendBufferSize())),
            Map.entry("busy-poll", new Property("homa.transport.busy-poll", (p) -> p.getTransport().getBusyPoll())),
            Map.entry("timetrace-events", new Property("homa.transport.timetrace-events",
                    (p) -> p.getTransport().getTimetraceEvents())),
            Map.entry("loops", new Property("homa.transport.loops", (p) -> p.getTransport().getLoops())));

    private record Property(String name, Function<HomaProperties, Object> value) {
    }

    private HomaSettingErrors() {
    }

    private static Map.Entry<String, Property> protocol(String setting,
            Function<HomaProtocolProperties, Object> value) {
        return Map.entry(setting, new Property("homa.protocol." + setting, (p) -> value.apply(p.getProtocol())));
    }

    /**
     * The start-up failure for {@code error}: the property, its value, and "must be between MIN and
     * MAX" in the property's units (plus the byte counts for sizes), or the builder's own rule when
     * it is not a plain range. A setting with no property (an application's own customizer set it)
     * keeps the builder's message.
     */
    static RuntimeException toPropertyError(InvalidSettingException error, HomaProperties properties) {
        Property property = PROPERTIES.get(error.setting());
        if (property == null) {
            return error;
        }
        Object value = property.value().apply(properties);
        String reason;
        if (error.minimum() == null || error.maximum() == null) {
            String message = error.getMessage();
            reason = message.startsWith(error.setting()) ? message.substring(error.setting().length()).trim() : message;
        } else {
            reason = "must be between " + format(error.minimum(), error.unit()) + " and "
                    + format(error.maximum(), error.unit());
            if (error.unit() == InvalidSettingException.Unit.BYTES) {
                reason += " (" + error.minimum() + ".." + error.maximum() + " bytes)";
            }
        }
        InvalidConfigurationPropertyValueException wrapped =
                new InvalidConfigurationPropertyValueException(property.name(), value, reason);
        wrapped.initCause(error);
        return wrapped;
    }

    private static String format(Number number, InvalidSettingException.Unit unit) {
        return switch (unit) {
            case BYTES -> bytes(number.longValue());
            case NANOS -> duration(number.longValue());
            case NONE -> number instanceof Double d && d == Math.rint(d) ? Long.toString(d.longValue()) : number.toString();
        };
    }

    /** The largest binary unit that divides the size exactly, as Spring's {@link DataSize} writes it: 64MB, 1B. */
    static String bytes(long sizeBytes) {
        String[] units = {"B", "KB", "MB", "GB", "TB"};
        int unit = 0;
        long size = sizeBytes;
        while (unit < units.length - 1 && size != 0 && size % 1024 == 0) {
            size /= 1024;
            unit++;
        }
        return size + units[unit];
    }

    /** Whole days, else whole seconds, else ms, us or ns, as Spring Boot's simple duration style: 1d, 60s, 1ms. */
    static String duration(long nanos) {
        Duration duration = Duration.ofNanos(nanos);
        if (nanos != 0 && nanos % Duration.ofDays(1).toNanos() == 0) {
            return duration.toDays() + "d";
        }
        if (nanos % 1_000_000_000L == 0) {
            return duration.toSeconds() + "s";
        }
        if (nanos % 1_000_000L == 0) {
            return duration.toMillis() + "ms";
        }
        if (nanos % 1_000L == 0) {
            return nanos / 1_000 + "us";
        }
        return nanos + "ns";
    }
}
