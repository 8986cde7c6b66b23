package io.homa.spring;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The repository's Markdown documentation (README.md and docs/), read by the tests that keep it true. */
final class RepositoryDocs {

    private RepositoryDocs() {
    }

    /** The directory holding README.md, docs/ and getting-started/: the module's parent when run by Maven. */
    static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("getting-started"))
                    && Files.isDirectory(dir.resolve("docs"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no README.md with docs/ and getting-started/ above "
                + Path.of("").toAbsolutePath());
    }

    /** README.md, then every Markdown file under docs/, in path order. */
    static List<Path> markdownFiles() {
        Path root = root();
        List<Path> files = new ArrayList<>();
        files.add(root.resolve("README.md"));
        try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
            docs.filter((file) -> Files.isRegularFile(file) && file.getFileName().toString().endsWith(".md"))
                    .sorted()
                    .forEach(files::add);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return files;
    }

    /** The file's path from the repository root, with forward slashes, for messages. */
    static String name(Path file) {
        return root().relativize(file.toAbsolutePath().normalize()).toString().replace('\\', '/');
    }

    static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
