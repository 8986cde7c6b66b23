package io.homa.architecture;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A library module users depend on: its directory, its root package, and packages of other modules
 * nested under that root (the starter's {@code io.homa.spring} holds the test support's
 * {@code io.homa.spring.test}). API packages are the root and its subpackages; internal ones have an
 * {@code internal} segment.
 */
record LibraryModule(String directory, String rootPackage, List<String> foreignSubpackages) {

    static final List<LibraryModule> ALL = List.of(
            new LibraryModule("protocol-engine", "io.homa.engine", List.of()),
            new LibraryModule("homa-reactive", "io.homa.reactive", List.of()),
            new LibraryModule("homa-grpc", "io.homa.grpc", List.of()),
            new LibraryModule("homa-spring-boot-starter", "io.homa.spring", List.of("io.homa.spring.test")),
            new LibraryModule("homa-spring-boot-test", "io.homa.spring.test", List.of()),
            new LibraryModule("homa-cli", "io.homa.cli", List.of()));

    /** Whether a package belongs to this module. */
    boolean owns(String packageName) {
        if (!within(packageName, rootPackage)) {
            return false;
        }
        return foreignSubpackages.stream().noneMatch(foreign -> within(packageName, foreign));
    }

    /** Whether a package is one of this module's internal ones. */
    boolean ownsInternal(String packageName) {
        return owns(packageName) && ApiBoundary.isInternalPackage(packageName);
    }

    /** The module's compiled classes, found from the reactor's root whatever directory the test runs in. */
    Path classesDirectory() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path classes = dir.resolve(directory).resolve("target/classes");
            if (Files.isDirectory(dir.resolve(directory)) && Files.isRegularFile(dir.resolve("pom.xml"))) {
                return classes;
            }
        }
        throw new IllegalStateException("no module " + directory + " above " + Path.of("").toAbsolutePath());
    }

    private static boolean within(String packageName, String root) {
        return packageName.equals(root) || packageName.startsWith(root + ".");
    }

    @Override
    public String toString() {
        return directory;
    }
}
