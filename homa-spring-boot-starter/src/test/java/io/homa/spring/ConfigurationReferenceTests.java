package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * docs/configuration.md's table of properties is what {@link ConfigurationReference} makes of the
 * starter's configuration metadata: a property added, renamed or described anew fails this test
 * until the table is regenerated.
 */
class ConfigurationReferenceTests {

    static final String REGENERATE = "homa.docs.regenerate";

    @Test
    void shouldMatchTheConfigurationMetadata() throws IOException {
        Path doc = RepositoryDocs.root().resolve(ConfigurationReference.DOC);
        String text = RepositoryDocs.read(doc);
        String table = ConfigurationReference.table(ConfigurationReference.metadata());
        if (Boolean.getBoolean(REGENERATE) && !ConfigurationReference.region(text).equals(table)) {
            ConfigurationReference.write(doc, ConfigurationReference.withTable(text, table));
            text = RepositoryDocs.read(doc);
        }
        String committed = ConfigurationReference.region(text);
        assertThat(committed)
                .as("%s's generated table is stale (%s); regenerate it with%n"
                        + "  ./mvnw -B -q -pl homa-spring-boot-starter -am test -Dtest=ConfigurationReferenceTests"
                        + " -Dsurefire.failIfNoSpecifiedTests=false -D%s=true%nand commit the file",
                        ConfigurationReference.DOC, firstDifference(committed, table), REGENERATE)
                .isEqualTo(table);
    }

    /** The first line where the committed table and the generated one differ, for the failure message. */
    private static String firstDifference(String committed, String generated) {
        List<String> was = committed.lines().toList();
        List<String> is = generated.lines().toList();
        for (int i = 0; i < Math.max(was.size(), is.size()); i++) {
            String before = i < was.size() ? was.get(i) : "(no line)";
            String after = i < is.size() ? is.get(i) : "(no line)";
            if (!before.equals(after)) {
                return "line " + (i + 1) + " of the table is " + before + " but the metadata makes it " + after;
            }
        }
        return "the line ends differ";
    }

    @Test
    void shouldListEveryPropertyOnceWithItsTypeDefaultAndDescription() throws IOException {
        JsonNode metadata = ConfigurationReference.metadata();
        String table = ConfigurationReference.table(metadata);
        assertThat(table.lines().filter((line) -> line.startsWith("| `homa.")))
                .hasSize(metadata.path("properties").size());
        assertThat(table).contains("| `homa.server.port` | `Integer` | `4000` | UDP port (= Homa port)")
                .contains("| `homa.client.peers` | `Map<String, String>` |  | Endpoints of each remote service")
                .contains("| `homa.transport.link-mbps` | `Integer` |  | Deprecated. Moved to homa.protocol.link-mbps");
    }

    @Test
    void shouldKeepTheTableInOneCellPerColumn() {
        JsonNode metadata = JsonMapper.builder().build().readTree("""
                {"groups": [{"name": "homa"}], "properties": [
                  {"name": "homa.b", "type": "java.util.List<java.lang.String>", "defaultValue": ["json", "cbor"],
                   "description": "Either a | b,\\n  or <service> * 2."},
                  {"name": "homa.a", "type": "io.homa.spring.HomaProperties$Server", "defaultValue": true}]}
                """);
        assertThat(ConfigurationReference.table(metadata)).isEqualTo("""
                | property | type | default | description |
                | --- | --- | --- | --- |
                | `homa.a` | `Server` | `true` |  |
                | `homa.b` | `List<String>` | `json, cbor` | Either a \\| b, or &lt;service&gt; \\* 2. |
                """);
    }

    @Test
    void shouldReplaceOnlyTheMarkedRegion() {
        String doc = "# Title\n\nBefore.\n\n" + ConfigurationReference.BEGIN + "\nold\n" + ConfigurationReference.END
                + "\n\nAfter.\n";
        String updated = ConfigurationReference.withTable(doc, "| new |\n");
        assertThat(updated).isEqualTo("# Title\n\nBefore.\n\n" + ConfigurationReference.BEGIN + "\n| new |\n"
                + ConfigurationReference.END + "\n\nAfter.\n");
        assertThat(ConfigurationReference.region(updated)).isEqualTo("| new |\n");
        assertThatIllegalStateException().isThrownBy(() -> ConfigurationReference.region("no markers"));
    }
}
