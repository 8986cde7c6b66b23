package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The getting-started code blocks of README.md and docs/ are the files of {@code getting-started/},
 * which CI compiles and tests against the installed artifacts (.ci/run), so the documentation's
 * code cannot rot: each block preceded by {@code <!-- snippet: path -->} must be that file, byte for
 * byte, and every file of the application is shown somewhere.
 */
class ReadmeSnippetsTests {

    private static final Pattern MARKER = Pattern.compile("<!-- snippet: (\\S+) -->");

    /** A marker, the fenced block right after it (its info string, e.g. java), and the block's text. */
    private static final Pattern SNIPPET = Pattern.compile(
            "<!-- snippet: (\\S+) -->\\n```[a-z]*\\n(.*?)^```$", Pattern.DOTALL | Pattern.MULTILINE);

    private static final String JAVA = "getting-started/src/main/java/com/example/greeting/";

    @Test
    void everyGettingStartedBlockIsTheFileItNames() throws IOException {
        Path root = RepositoryDocs.root();
        Set<String> covered = new LinkedHashSet<>();
        for (Path doc : RepositoryDocs.markdownFiles()) {
            String name = RepositoryDocs.name(doc);
            String text = RepositoryDocs.read(doc);
            List<String> marked = new ArrayList<>();
            Matcher markers = MARKER.matcher(text);
            while (markers.find()) {
                marked.add(markers.group(1));
            }
            List<String> checked = new ArrayList<>();
            Matcher snippets = SNIPPET.matcher(text);
            while (snippets.find()) {
                String path = snippets.group(1);
                Path file = root.resolve(path);
                assertThat(file).as("the file %s's snippet names", name).isRegularFile();
                assertThat(snippets.group(2)).as("%s's block for %s (must equal the file)", name, path)
                        .isEqualTo(Files.readString(file, StandardCharsets.UTF_8));
                checked.add(path);
            }
            assertThat(checked).as("in %s, every snippet marker is followed by a fenced block", name)
                    .isEqualTo(marked);
            covered.addAll(checked);
        }
        assertThat(covered).as("the getting-started files shown in README.md or docs/")
                .containsExactlyInAnyOrder("getting-started/pom.xml", JAVA + "GreetingService.java",
                        JAVA + "GreetingRequest.java", JAVA + "Greeting.java", JAVA + "GreetingClient.java",
                        "getting-started/src/main/resources/application.yml");
    }
}
