package io.homa.bench.report;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The machine, JDK and library versions for the report header. */
public final class Environment {
    private static final Pattern JAR_VERSION = Pattern.compile("-(\\d[\\w.\\-]*)\\.jar$");

    private Environment() {}

    /** Machine: logical cores, CPU model (from /proc/cpuinfo when readable), OS. */
    public static Map<String, Object> machine(int coresBeforePinning) {
        Map<String, Object> machine = new LinkedHashMap<>();
        machine.put("cores", coresBeforePinning);
        machine.put("cpu_model", cpuModel());
        machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        return machine;
    }

    static String cpuModel() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/cpuinfo"));
            for (String line : lines) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
            return "unknown (no model name in /proc/cpuinfo)";
        } catch (IOException | RuntimeException e) {
            return "unknown (/proc/cpuinfo not readable)";
        }
    }

    /** The running JDK. */
    public static String jdk() {
        return System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version") + " ("
                + System.getProperty("java.vendor") + ")";
    }

    /** Versions of the libraries under test, read from the names of the jars that hold them. */
    public static Map<String, String> versions() {
        Map<String, String> versions = new LinkedHashMap<>();
        versions.put("homa-reactive", version("io.homa.reactive.HomaTransport"));
        versions.put("protocol-engine", version("io.homa.engine.HomaEngine"));
        versions.put("grpc-java", version("io.grpc.ManagedChannel"));
        versions.put("grpc-netty-shaded", version("io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder"));
        versions.put("rsocket-java", version("io.rsocket.RSocket"));
        versions.put("netty", version("io.netty.channel.Channel"));
        versions.put("reactor-netty", version("reactor.netty.tcp.TcpClient"));
        versions.put("reactor-core", version("reactor.core.publisher.Mono"));
        versions.put("jackson-databind", version("tools.jackson.databind.ObjectMapper"));
        return versions;
    }

    /** The version of the jar holding a class: from its file name, else its manifest, else "unknown". */
    public static String version(String className) {
        try {
            Class<?> type = Class.forName(className, false, Environment.class.getClassLoader());
            CodeSource source = type.getProtectionDomain().getCodeSource();
            if (source != null && source.getLocation() != null) {
                String file = Path.of(source.getLocation().toURI()).getFileName().toString();
                Matcher matcher = JAR_VERSION.matcher(file);
                if (matcher.find()) {
                    return matcher.group(1);
                }
            }
            Package pkg = type.getPackage();
            if (pkg != null && pkg.getImplementationVersion() != null) {
                return pkg.getImplementationVersion();
            }
            return "unknown (classes directory)";
        } catch (ClassNotFoundException e) {
            return "absent";
        } catch (URISyntaxException | RuntimeException e) {
            return "unknown";
        }
    }
}
