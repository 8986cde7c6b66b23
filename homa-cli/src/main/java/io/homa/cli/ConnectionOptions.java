package io.homa.cli;

import io.homa.reactive.HomaSecurityConfig;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** The options every command takes: where the endpoint is, the deadline, metadata and keys. */
final class ConnectionOptions {

    /** Default endpoint: the starter's default port on this host. */
    static final String DEFAULT_PEER = "127.0.0.1:4000";

    private static final Pattern HOST_PORT = Pattern.compile("(?:\\[([^\\]]+)]|([^:\\[\\]]+)):(\\d{1,5})");

    private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h)?");

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(names = "--peer", paramLabel = "HOST:PORT", defaultValue = "${env:HOMA_PEER:-" + DEFAULT_PEER + "}",
            description = "The Homa endpoint to call ([v6]:port for IPv6); default: env HOMA_PEER, else "
                    + DEFAULT_PEER + ".")
    String peer = DEFAULT_PEER;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10s", converter = DurationConverter.class,
            description = "Deadline of each call (of a whole stream): 500ms, 10s, 2m, 1h, a plain number of"
                    + " seconds, or ISO-8601 (PT10S); 0 = none. Default: ${DEFAULT-VALUE}.")
    Duration timeout = Duration.ofSeconds(10);

    @Option(names = {"-m", "--metadata"}, paramLabel = "KEY=VALUE",
            description = "Request metadata, repeatable (keys starting with homa- are reserved).")
    Map<String, String> metadata = new LinkedHashMap<>();

    @Option(names = "--key", paramLabel = "ID=BASE64", defaultValue = "${env:HOMA_KEY}",
            description = "Packet authentication key (homa.security.keys.<id> of the server): a key id 0..255 and"
                    + " the base64 of its 32 bytes; default: env HOMA_KEY. With it every packet is authenticated"
                    + " (homa.security.mode=authenticate).")
    @Nullable String key;

    @Option(names = "--encrypt", description = "With --key: encrypt the packets too (homa.security.mode=encrypt).")
    boolean encrypt;

    @Option(names = {"-v", "--verbose"}, description = "Log the transport's warnings and print stack traces.")
    boolean verbose;

    /**
     * The endpoint, resolved.
     *
     * @throws ParameterException (exit 2) if it is not {@code host:port} or the host does not resolve
     */
    InetSocketAddress peerAddress() {
        Matcher matcher = HOST_PORT.matcher(this.peer.trim());
        int port = matcher.matches() ? Integer.parseInt(matcher.group(3)) : -1;
        if (port < 1 || port > 65535) {
            throw usage("--peer must be HOST:PORT (IPv6 as [ADDRESS]:PORT) with a port 1..65535, was '"
                    + this.peer + "'");
        }
        String host = (matcher.group(1) != null) ? matcher.group(1) : matcher.group(2);
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        }
        catch (UnknownHostException ex) {
            throw usage("--peer host '" + host + "' does not resolve");
        }
    }

    /**
     * The packet authentication of {@code --key} and {@code --encrypt}: off without a key.
     *
     * @throws ParameterException (exit 2) if the key is not {@code ID=BASE64} of 32 bytes
     */
    HomaSecurityConfig security() {
        if (this.key == null || this.key.isBlank()) {
            if (this.encrypt) {
                throw usage("--encrypt needs --key ID=BASE64");
            }
            return HomaSecurityConfig.off();
        }
        int separator = this.key.indexOf('=');
        int id;
        byte[] bytes;
        try {
            id = Integer.parseInt(this.key.substring(0, Math.max(separator, 0)).trim());
            bytes = Base64.getDecoder().decode(this.key.substring(separator + 1).trim());
        }
        catch (IllegalArgumentException ex) { // NumberFormatException is one
            throw usage("--key must be ID=BASE64 (a key id 0..255 and the base64 of 32 bytes)");
        }
        if (id < 0 || id > HomaSecurityConfig.MAX_KEY_ID || bytes.length != HomaSecurityConfig.KEY_BYTES) {
            throw usage("--key must be ID=BASE64 with an id 0..255 and 32 bytes, was id " + id + " and "
                    + bytes.length + " bytes");
        }
        return this.encrypt ? HomaSecurityConfig.encrypt(Map.of(id, bytes), id)
                : HomaSecurityConfig.authenticate(Map.of(id, bytes), id);
    }

    /**
     * The metadata, checked.
     *
     * @throws ParameterException (exit 2) if a key is reserved
     */
    Map<String, String> checkedMetadata() {
        for (String name : this.metadata.keySet()) {
            if (name.toLowerCase(Locale.ROOT).startsWith("homa-")) {
                throw usage("--metadata key '" + name + "' is reserved (prefix homa-)");
            }
        }
        return this.metadata;
    }

    private ParameterException usage(String message) {
        return new ParameterException(this.spec.commandLine(), message);
    }

    /** {@code 500ms}, {@code 10s}, {@code 2m}, {@code 1h}, seconds, or ISO-8601. */
    static final class DurationConverter implements ITypeConverter<Duration> {

        @Override
        public Duration convert(String value) {
            String text = value.trim().toLowerCase(Locale.ROOT);
            Matcher matcher = DURATION.matcher(text);
            if (matcher.matches()) {
                long amount = Long.parseLong(matcher.group(1));
                String unit = (matcher.group(2) != null) ? matcher.group(2) : "s";
                return switch (unit) {
                    case "ms" -> Duration.ofMillis(amount);
                    case "m" -> Duration.ofMinutes(amount);
                    case "h" -> Duration.ofHours(amount);
                    default -> Duration.ofSeconds(amount);
                };
            }
            try {
                Duration duration = Duration.parse(value.trim());
                if (!duration.isNegative()) {
                    return duration;
                }
            }
            catch (DateTimeParseException ex) {
                // below
            }
            throw new IllegalArgumentException("'" + value + "' is not a duration such as 500ms, 10s, 2m or 0");
        }
    }
}
