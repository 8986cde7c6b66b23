package io.homa.reactive.fault;

import io.homa.reactive.HomaTransport;
import io.homa.reactive.HomaTransportConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The server side of {@link NetemRpcTest}, run as a separate JVM inside a network namespace
 * ({@code ip netns exec}): a counting echo server bound to {@code args[0]} on a free port.
 * Protocol on stdout/stdin: prints {@code PORT <port>} once bound; on a {@code RESET} line forgets
 * the executions so far and prints {@code RESET}; on a {@code STOP} line (or the end of stdin)
 * prints {@code EXECUTIONS <executions> <distinct rpcs> <rpcs run more than once>} and exits.
 */
final class NetemEchoServer {
    private NetemEchoServer() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: NetemEchoServer <bind address>");
        }
        ExecutionCountingEcho echo = new ExecutionCountingEcho();
        HomaTransportConfig config = HomaTransportConfig.builder().bindAddress(args[0]).build();
        HomaTransport server = HomaTransport.bindNow(config, echo, Duration.ofSeconds(10));
        try {
            System.out.println("PORT " + server.localAddress().getPort());
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
            for (String line = in.readLine(); line != null && !line.equals("STOP"); line = in.readLine()) {
                if (line.equals("RESET")) {
                    echo.reset();
                    System.out.println("RESET");
                    System.out.flush();
                }
            }
            System.out.println("EXECUTIONS " + echo.executions() + " " + echo.distinctRpcs() + " "
                    + echo.executedMoreThanOnce().size());
            System.out.flush();
        } finally {
            server.disposeNow();
        }
    }
}
