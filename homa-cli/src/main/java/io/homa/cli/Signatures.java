package io.homa.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/** Formats a reflection listing's methods as Java-like signatures, for people. */
final class Signatures {

    /** A qualified Java name, e.g. {@code java.util.List} or {@code com.example.Outer$Inner}. */
    private static final Pattern QUALIFIED = Pattern.compile("(?:[A-Za-z_][\\w]*\\.)+([A-Za-z_$][\\w$]*)");

    private Signatures() {
    }

    /**
     * One method, e.g. {@code Flux<KvRecord> scan(String fromKey, int limit)  [stream, idempotent]}:
     * the result ({@code Flux<T>} for a stream, {@code ?} when unknown), the name, the parameters
     * ({@code argN} when the server does not know their names), and the kind and flags.
     */
    static String method(JsonNode method) {
        String kind = method.path("kind").asString("unary");
        JsonNode result = method.path("result");
        String resultType = result.isObject() ? simpleName(result.path("type").asString("?")) : "?";
        if (kind.equals("stream")) {
            resultType = "Flux<" + resultType + ">";
        }
        List<String> parameters = new ArrayList<>();
        int index = 0;
        for (JsonNode parameter : method.path("parameters").values()) {
            String name = parameter.path("name").isString() ? parameter.path("name").asString() : "arg" + index;
            parameters.add(simpleName(parameter.path("type").asString("?")) + " " + name);
            index++;
        }
        List<String> flags = new ArrayList<>();
        flags.add(kind);
        if (method.path("idempotent").asBoolean(false)) {
            flags.add("idempotent");
        }
        return resultType + " " + method.path("name").asString("?") + "(" + String.join(", ", parameters) + ")  "
                + flags;
    }

    /** {@code java.util.List<com.example.Outer$Item>} as {@code List<Item>}: simple class names. */
    static String simpleName(String typeName) {
        Matcher matcher = QUALIFIED.matcher(typeName);
        StringBuilder simple = new StringBuilder();
        while (matcher.find()) {
            matcher.appendReplacement(simple, Matcher.quoteReplacement(matcher.group(1).substring(matcher.group(1).lastIndexOf('$') + 1)));
        }
        matcher.appendTail(simple);
        return simple.toString();
    }
}
