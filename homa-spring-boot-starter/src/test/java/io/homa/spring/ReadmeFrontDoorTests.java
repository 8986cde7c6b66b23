package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * README.md stays the front door: short, and opening with the two commands (build and run the demo;
 * run every test) that .ci/run and a new reader start from. Everything else lives in docs/.
 */
class ReadmeFrontDoorTests {

    private static final int MAX_LINES = 200;

    @Test
    void shouldOpenWithTheTwoCommandsAndStayShort() {
        List<String> lines = RepositoryDocs.read(RepositoryDocs.root().resolve("README.md")).lines().toList();
        assertThat(lines).as("README.md's lines (the rest belongs in docs/)").hasSizeLessThanOrEqualTo(MAX_LINES);
        assertThat(lines.get(0)).startsWith("# ");
        assertThat(lines.subList(1, 6)).containsExactly("", "```bash",
                "./mvnw -q -B -pl demo-services -am package -DskipTests && java -jar demo-services/target/demo-services.jar",
                "./mvnw -B verify",
                "```");
        assertThat(String.join("\n", lines)).as("README.md links to the documentation index")
                .contains("](docs/README.md)");
    }
}
