package io.homa.bench;

import io.homa.bench.systems.SystemSettings;
import io.homa.reactive.HomaTransportConfig;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The {@link SystemSettings} of a spawned process ({@link ServerMain}, {@link LoadAgent}) as
 * command-line options, written by {@link ServerProcess#settingsArguments(SystemSettings)}.
 */
public final class SettingsOptions {
    @Option(names = "--homa-link-mbps", description = "Pacer rate of the Homa transports, Mbit/s (0 = none).")
    int homaLinkMbps = SystemSettings.defaults().homaLinkMbps();

    @Option(names = "--homa-mtu-bytes", description = "MTU of every Homa engine, 256..65535. Default: the engine's default (${DEFAULT-VALUE}).")
    int homaMtuBytes = SystemSettings.defaults().homaMtuBytes();

    @Option(names = "--no-homa-gso", negatable = true, description = "UDP GSO and GRO for the Homa transports.")
    boolean homaGso = true;

    @Option(names = "--no-grpc-direct-executor", negatable = true, description = "gRPC handlers on the event loop.")
    boolean grpcDirectExecutor = true;

    @Option(names = "--homa-security", converter = SecurityModeConverter.class, description = "Packet authentication of the Homa transports: off, authenticate or encrypt.")
    io.homa.reactive.HomaSecurityConfig.Mode homaSecurity = io.homa.reactive.HomaSecurityConfig.Mode.OFF;

    @Option(names = "--homa-priority-tos", description = "Homa priority in the IP TOS byte: auto (off on loopback), on or off.")
    HomaTransportConfig.PriorityTos homaPriorityTos = HomaTransportConfig.PriorityTos.AUTO;

    @Option(names = "--homa-congestion-control", description = "Congestion control of the Homa engines: rtt or off.")
    io.homa.engine.CongestionControl homaCongestionControl = io.homa.engine.CongestionControl.OFF;

    @Option(names = "--no-homa-incast-marking", negatable = true, description = "INCAST marking of Homa requests.")
    boolean homaIncastMarking = true;

    @Option(names = "--homa-incast-buffer-bytes", description = "Incast buffer of the Homa transports, bytes (-1 = the transport's choice).")
    int homaIncastBufferBytes = HomaTransportConfig.AUTO_INCAST_BUFFER;

    @Option(names = "--bind-host", description = "IPv4 address every server and client of the process binds. Default: ${DEFAULT-VALUE}.")
    String bindHost = SystemSettings.LOOPBACK_HOST;

    @Option(names = "--homa-busy-poll-ns", description = "Busy poll of the Homa transports' event loops, ns (-1 = the transport's default).")
    long homaBusyPollNs = SystemSettings.TRANSPORT_DEFAULT;

    @Option(names = "--homa-timetrace-dir", description = "Directory the Homa transports write their timetraces to when they close (empty: no timetrace).")
    String homaTimetraceDir = "";

    @Option(names = "--homa-loops", description = "Event loops of the Homa transports (0 = the transport's default).")
    int homaLoops = io.homa.bench.systems.HomaLoops.TRANSPORT_DEFAULT;

    /** {@code off}, {@code authenticate} or {@code encrypt}, in any case, as {@code homa.security.mode}. */
    public static final class SecurityModeConverter implements CommandLine.ITypeConverter<io.homa.reactive.HomaSecurityConfig.Mode> {
        @Override
        public io.homa.reactive.HomaSecurityConfig.Mode convert(String value) {
            for (io.homa.reactive.HomaSecurityConfig.Mode mode : io.homa.reactive.HomaSecurityConfig.Mode.values()) {
                if (mode.propertyValue().equalsIgnoreCase(value.trim())) {
                    return mode;
                }
            }
            throw new CommandLine.TypeConversionException("expected off, authenticate or encrypt, was '" + value + "'");
        }
    }

    /** The settings the command line gave. */
    public SystemSettings settings() {
        return new SystemSettings(homaLinkMbps, homaMtuBytes, grpcDirectExecutor, homaGso, homaSecurity, homaPriorityTos,
                homaIncastMarking, bindHost, homaIncastBufferBytes, homaBusyPollNs, homaTimetraceDir, homaLoops,
                homaCongestionControl);
    }
}
