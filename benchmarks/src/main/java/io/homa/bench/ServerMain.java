package io.homa.bench;

import io.homa.bench.systems.EchoServer;
import io.homa.bench.systems.SystemKind;
import io.homa.bench.systems.SystemSettings;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The server process: starts an echo server for each system on a free port of its bind host, prints one
 * line {@code PORTS id=port id=port ...} on standard output, serves until standard input closes
 * (the load generator closes it, or dies), then stops.
 */
@Command(name = "homa-bench-server", mixinStandardHelpOptions = true,
        description = "Echo servers of every system, for the load generator (started by it).")
public final class ServerMain implements Callable<Integer> {
    /** The line prefix the load generator waits for. */
    public static final String PORTS_PREFIX = "PORTS ";

    @Option(names = "--systems", split = ",", description = "Systems to serve (ids: homa, homa-rpc, grpc, grpc-homa, rsocket, udp, tcp, homa-auth, homa-rpc-auth).")
    List<String> systems = List.of(SystemKind.defaultIds().split(","));

    @CommandLine.Mixin
    SettingsOptions options = new SettingsOptions();

    public static void main(String[] args) {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        int code = new CommandLine(new ServerMain()).setCaseInsensitiveEnumValuesAllowed(true).execute(args);
        System.exit(code);
    }

    /** The settings the command line gave. */
    SystemSettings settings() {
        return options.settings();
    }

    @Override
    public Integer call() throws Exception {
        SystemSettings settings = settings();
        Map<SystemKind, EchoServer> servers = new LinkedHashMap<>();
        try {
            for (String id : systems) {
                SystemKind kind = SystemKind.fromId(id);
                servers.put(kind, kind.startServer(settings));
            }
            List<String> ports = new ArrayList<>();
            servers.forEach((kind, server) -> ports.add(kind.id() + "=" + server.port()));
            System.out.println(PORTS_PREFIX + String.join(" ", ports));
            System.out.flush();
            waitForEndOfInput(System.in);
        } finally {
            servers.forEach((kind, server) -> {
                try {
                    Map<String, Long> counters = server.counters();
                    if (!counters.isEmpty()) {
                        // The server's side of every failed call, in its log (the run's server-N.log).
                        System.err.println("counters " + kind.id() + ": " + counters);
                    }
                    server.close();
                } catch (RuntimeException e) {
                    System.err.println("closing a server: " + e);
                }
            });
        }
        return 0;
    }

    private static void waitForEndOfInput(InputStream in) {
        byte[] buffer = new byte[256];
        try {
            while (in.read(buffer) >= 0) {
                // ignore input; EOF means stop
            }
        } catch (IOException e) {
            // parent gone
        }
    }
}
