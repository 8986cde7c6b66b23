package io.homa.cli;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import tools.jackson.databind.JsonNode;

/**
 * {@code homa list [SERVICE]}: the services of the endpoint and their methods, as the endpoint's
 * reflection service lists them.
 */
@Command(name = "list", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Lists the services the endpoint exports and each method's signature, from its reflection"
                + " service homa.reflection (served by the starter where homa.server.reflection.enabled allows:"
                + " by default when bound to a loopback address or with packet authentication)."})
final class ListCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Parameters(index = "0", arity = "0..1", paramLabel = "SERVICE", description = "Only this service.")
    @Nullable String service;

    @Option(names = "--json", description = "Print the listing as the server sends it (JSON, with a JSON Schema"
            + " per parameter and result).")
    boolean json;

    @Override
    public Integer call() {
        PrintWriter out = this.spec.commandLine().getOut();
        PrintWriter err = this.spec.commandLine().getErr();
        JsonNode listing;
        try (Session session = Session.open(this.connection, HomaCli.MAPPER)) {
            listing = session.list();
        }
        catch (HomaException ex) {
            int code = HomaCli.report(err, ex, this.connection.verbose);
            if (ex.status() == HomaStatus.UNIMPLEMENTED) {
                err.println("(the endpoint serves no reflection: set homa.server.reflection.enabled=true on it;"
                        + " it is on by default only when bound to a loopback address or with packet authentication)");
                err.flush();
            }
            return code;
        }
        List<JsonNode> services = new ArrayList<>();
        for (JsonNode entry : listing.path("services").values()) {
            if (this.service == null || this.service.equals(entry.path("name").asString(""))) {
                services.add(entry);
            }
        }
        if (this.service != null && services.isEmpty()) {
            err.println(HomaStatus.NOT_FOUND + ": no service '" + this.service + "' on " + this.connection.peer
                    + "; it exports: " + String.join(", ", listing.path("services").values().stream()
                            .map((entry) -> entry.path("name").asString("?")).toList()));
            err.flush();
            return ExitCodes.of(HomaStatus.NOT_FOUND);
        }
        if (this.json) {
            JsonNode printed = listing;
            if (this.service != null) {
                printed = listing.deepCopy();
                ((tools.jackson.databind.node.ObjectNode) printed).putArray("services").addAll(services);
            }
            out.println(HomaCli.PRETTY.writeValueAsString(printed));
        }
        else {
            for (JsonNode entry : services) {
                out.println(entry.path("name").asString("?"));
                for (JsonNode method : entry.path("methods").values()) {
                    out.println("  " + Signatures.method(method));
                }
            }
        }
        out.flush();
        return ExitCodes.OK;
    }
}
