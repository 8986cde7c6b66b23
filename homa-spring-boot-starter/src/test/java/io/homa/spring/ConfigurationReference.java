package io.homa.spring;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes the table of {@code homa.*} properties in {@code docs/configuration.md} from the starter's
 * configuration metadata ({@code META-INF/spring-configuration-metadata.json}, which the
 * configuration processor writes at {@code compile} from {@code HomaProperties}' Javadoc and merges
 * with {@code additional-spring-configuration-metadata.json}), so the reference says what IDE
 * completion says. The table sits between {@link #BEGIN} and {@link #END}; the rest of the page is
 * written by hand. {@code ConfigurationReferenceTests} fails when the committed table differs, and
 * rewrites it when run with {@code -Dhoma.docs.regenerate=true}; {@link #main} does the same from
 * the test class path.
 */
final class ConfigurationReference {

    static final String DOC = "docs/configuration.md";

    static final String BEGIN = "<!-- generated:configuration-properties -->";

    static final String END = "<!-- end generated -->";

    /** A qualified Java type name, e.g. {@code java.util.Map} or {@code io.homa.spring.HomaProperties$Client}. */
    private static final Pattern TYPE_NAME = Pattern.compile("[\\w.$]+");

    private static final String METADATA = "META-INF/spring-configuration-metadata.json";

    private ConfigurationReference() {
    }

    /** Rewrites the table in {@value #DOC}. */
    public static void main(String[] args) throws IOException {
        Path doc = RepositoryDocs.root().resolve(DOC);
        write(doc, withTable(RepositoryDocs.read(doc), table(metadata())));
        System.out.println("wrote the configuration reference of " + doc);
    }

    /** The starter's metadata: of the metadata files on the class path, the one that declares the group "homa". */
    static JsonNode metadata() throws IOException {
        JsonMapper mapper = JsonMapper.builder().build();
        Enumeration<URL> resources = ConfigurationReference.class.getClassLoader().getResources(METADATA);
        while (resources.hasMoreElements()) {
            try (InputStream in = resources.nextElement().openStream()) {
                JsonNode root = mapper.readTree(in);
                for (JsonNode group : root.path("groups")) {
                    if (group.path("name").asString("").equals("homa")) {
                        return root;
                    }
                }
            }
        }
        throw new IllegalStateException("no " + METADATA + " with the group homa on the class path: compile the starter");
    }

    /** The Markdown table of every property in the metadata, by name: property, type, default, description. */
    static String table(JsonNode metadata) {
        Map<String, JsonNode> properties = new TreeMap<>();
        for (JsonNode property : metadata.path("properties")) {
            properties.put(property.path("name").asString(), property);
        }
        StringBuilder table = new StringBuilder();
        table.append("| property | type | default | description |\n");
        table.append("| --- | --- | --- | --- |\n");
        properties.forEach((name, property) -> table.append("| `").append(name).append("` | ")
                .append(code(type(property.path("type").asString(""))))
                .append(" | ").append(code(defaultValue(property.path("defaultValue"))))
                .append(" | ").append(description(property)).append(" |\n"));
        return table.toString();
    }

    /** The doc with the text between its markers replaced by the table. */
    static String withTable(String doc, String table) {
        return doc.substring(0, regionStart(doc)) + "\n" + table + doc.substring(regionEnd(doc));
    }

    /** The text between the doc's markers, as {@link #table} writes it. */
    static String region(String doc) {
        return doc.substring(regionStart(doc) + 1, regionEnd(doc));
    }

    private static int regionStart(String doc) {
        int begin = doc.indexOf(BEGIN);
        if (begin < 0 || doc.indexOf(BEGIN, begin + 1) >= 0) {
            throw new IllegalStateException(DOC + " must hold the line " + BEGIN + " once");
        }
        return begin + BEGIN.length();
    }

    private static int regionEnd(String doc) {
        int end = doc.indexOf(END, regionStart(doc));
        if (end < 0) {
            throw new IllegalStateException(DOC + " must hold the line " + END + " after " + BEGIN);
        }
        return end;
    }

    /** A type without its packages and outer classes: {@code Map<String, ServiceSettings>}. */
    static String type(String javaType) {
        Matcher name = TYPE_NAME.matcher(javaType);
        StringBuilder simple = new StringBuilder();
        while (name.find()) {
            String qualified = name.group();
            name.appendReplacement(simple, Matcher.quoteReplacement(
                    qualified.substring(Math.max(qualified.lastIndexOf('.'), qualified.lastIndexOf('$')) + 1)));
        }
        name.appendTail(simple);
        return simple.toString().replace(",", ", ");
    }

    private static String defaultValue(JsonNode value) {
        if (value.isMissingNode() || value.isNull()) {
            return "";
        }
        if (value.isArray()) {
            List<String> items = new ArrayList<>();
            value.forEach((item) -> items.add(item.asString()));
            return String.join(", ", items);
        }
        return value.asString();
    }

    private static String description(JsonNode property) {
        String text = property.path("description").asString("");
        JsonNode deprecation = property.path("deprecation");
        if (!deprecation.isMissingNode()) {
            String replacement = deprecation.path("replacement").asString("");
            if (text.isBlank() && !replacement.isEmpty()) {
                text = "Replaced by " + replacement + ".";
            }
            text = "Deprecated. " + text + " " + deprecation.path("reason").asString("");
        }
        return cell(text);
    }

    /** Text safe in a table cell: one line, no column break, no HTML tag or emphasis by accident. */
    private static String cell(String text) {
        return text.strip().replaceAll("\\s+", " ")
                .replace("|", "\\|")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("*", "\\*");
    }

    private static String code(String text) {
        return text.isEmpty() ? "" : "`" + text + "`";
    }

    static void write(Path doc, String text) {
        try {
            Files.writeString(doc, text, StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
