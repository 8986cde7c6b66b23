package io.homa.cli;

import io.homa.reactive.HomaException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * {@code homa call SERVICE METHOD [JSON...]}: calls one method with JSON arguments and prints the
 * JSON result, or each item of a stream on a line of its own as it arrives.
 *
 * <p>Each argument is one JSON value; the server decodes it to the method's parameter type with its
 * JSON codec (one argument is the payload itself, several are one JSON array, as
 * {@code HomaClient} sends typed values). Whether the method streams, and how many arguments it
 * takes, come from the endpoint's reflection listing; an endpoint without reflection is called
 * unary.
 */
@Command(name = "call", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Calls SERVICE.METHOD with one JSON value per parameter and prints the JSON result; a streaming"
                + " method prints each item on a line of its own as it arrives. A failure prints STATUS: message"
                + " to stderr and exits with 64 + the status code.",
            "Example: homa call kv get '\"key-042\"'"})
final class CallCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    ConnectionOptions connection;

    @Parameters(index = "0", paramLabel = "SERVICE", description = "The service name.")
    String service;

    @Parameters(index = "1", paramLabel = "METHOD", description = "The method name.")
    String method;

    @Parameters(index = "2..*", paramLabel = "JSON", description = "One JSON value per parameter, in order:"
            + " a string needs its quotes ('\"key-042\"'); null, numbers, true/false, arrays and objects as in JSON.")
    List<String> arguments = new ArrayList<>();

    @Option(names = "--compact", description = "Print a unary result on one line (stream items always are).")
    boolean compact;

    @Override
    public Integer call() {
        PrintWriter out = this.spec.commandLine().getOut();
        PrintWriter err = this.spec.commandLine().getErr();
        List<JsonNode> values = parseArguments();
        try (Session session = Session.open(this.connection, HomaCli.MAPPER)) {
            JsonNode description = session.describe(this.service, this.method);
            String kind = (description != null) ? description.path("kind").asString("unary") : "unary";
            if (description != null) {
                checkArity(description, values.size());
            }
            if (kind.equals("stream")) {
                for (JsonNode item : session.stream(this.service, this.method, values).toIterable()) {
                    out.println(HomaCli.MAPPER.writeValueAsString(item));
                    out.flush();
                }
            }
            else if (kind.equals("unary")) {
                JsonNode result = session.call(this.service, this.method, values).block();
                boolean none = (result == null || result.isNull()) && description != null
                        && "void".equals(description.path("result").path("type").asString(""));
                if (!none) {
                    out.println(this.compact ? HomaCli.MAPPER.writeValueAsString(result)
                            : HomaCli.PRETTY.writeValueAsString(result));
                }
                out.flush();
            }
            else {
                throw usage("homa call supports unary and stream methods; " + this.service + "." + this.method
                        + " is " + kind);
            }
        }
        catch (HomaException ex) {
            out.flush();
            return HomaCli.report(err, ex, this.connection.verbose);
        }
        return ExitCodes.OK;
    }

    private List<JsonNode> parseArguments() {
        List<JsonNode> values = new ArrayList<>(this.arguments.size());
        for (int i = 0; i < this.arguments.size(); i++) {
            String text = this.arguments.get(i);
            @Nullable JsonNode value;
            @Nullable String problem;
            try {
                value = HomaCli.MAPPER.readTree(text);
                problem = (value == null || value.isMissingNode()) ? "no value" : null;
            }
            catch (JacksonException ex) {
                value = null;
                problem = ex.getOriginalMessage();
            }
            if (problem != null || value == null) {
                throw usage("argument " + (i + 1) + " (" + text + ") is not one JSON value: " + problem
                        + (text.isBlank() || text.startsWith("-") ? "" : "; a string needs its quotes: '\"" + text + "\"'"));
            }
            values.add(value);
        }
        return values;
    }

    private void checkArity(JsonNode description, int given) {
        JsonNode parameters = description.path("parameters");
        if (parameters.size() != given) {
            throw usage(this.service + "." + this.method + " takes " + parameters.size() + " argument(s), got "
                    + given + ": " + Signatures.method(description));
        }
    }

    private ParameterException usage(String message) {
        return new ParameterException(this.spec.commandLine(), message);
    }
}
