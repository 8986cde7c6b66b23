package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * README.md's getting-started code blocks are the files of {@code getting-started/}, which CI
 * compiles and tests against the installed artifacts (.ci/run), so the README's code cannot rot:
 * each block preceded by {@code <!-- snippet: path -->} must be that file, byte for byte.
 */
class ReadmeSnippetsTests {

    private static final Pattern MARKER = Pattern.compile("<!-- snippet: (\\S+) -->");

    /** A marker, the fenced block right after it (its info string, e.g. java), and the block's text. */
    private static final Pattern SNIPPET = Pattern.compile(
            "<!-- snippet: (\\S+) -->\\n```[a-z]*\\n(.*?)^```$", Pattern.DOTALL | Pattern.MULTILINE);

    private static final String JAVA = "getting-started/src/main/java/com/example/greeting/";

    @Test
    void everyGettingStartedBlockIsTheFileItNames() throws IOException {
        Path root = repositoryRoot();
        String readme = Files.readString(root.resolve("README.md"), StandardCharsets.UTF_8);
        List<String> marked = new ArrayList<>();
        Matcher markers = MARKER.matcher(readme);
        while (markers.find()) {
            marked.add(markers.group(1));
        }
        List<String> checked = new ArrayList<>();
        Matcher snippets = SNIPPET.matcher(readme);
        while (snippets.find()) {
            String path = snippets.group(1);
            Path file = root.resolve(path);
            assertThat(file).as("the file README.md's snippet names").isRegularFile();
            assertThat(snippets.group(2)).as("README.md's block for " + path + " (must equal the file)")
                    .isEqualTo(Files.readString(file, StandardCharsets.UTF_8));
            checked.add(path);
        }
        assertThat(checked).as("every snippet marker is followed by a fenced block").isEqualTo(marked);
        assertThat(checked).containsExactlyInAnyOrder("getting-started/pom.xml", JAVA + "GreetingService.java",
                JAVA + "GreetingRequest.java", JAVA + "Greeting.java", JAVA + "GreetingClient.java",
                "getting-started/src/main/resources/application.yml");
    }

    /** The directory holding README.md and getting-started/: the module's parent when run by Maven. */
    private static Path repositoryRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("getting-started"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no README.md with getting-started/ above " + Path.of("").toAbsolutePath());
    }
}
