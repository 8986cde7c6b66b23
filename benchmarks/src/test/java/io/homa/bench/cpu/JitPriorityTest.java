package io.homa.bench.cpu;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JitPriorityTest {

    @Test
    void shouldPickOnlyTheCompilerThreadsOfAProcess(@TempDir Path tasks) throws IOException {
        thread(tasks, "101", "java");
        thread(tasks, "102", "C2 CompilerThre");
        thread(tasks, "103", "C1 CompilerThre");
        thread(tasks, "104", "homa-epoll-1");
        thread(tasks, "105", "GC Thread#0");

        assertThat(JitPriority.compilerThreads(tasks)).containsExactlyInAnyOrder("102", "103");
    }

    @Test
    void shouldFindNothingWhereTheProcessIsGone(@TempDir Path dir) {
        assertThat(JitPriority.compilerThreads(dir.resolve("no-such-task-dir"))).isEmpty();
        assertThat(JitPriority.lower(List.of(Long.MAX_VALUE))).isZero();
    }

    private static void thread(Path tasks, String tid, String name) throws IOException {
        Files.createDirectories(tasks.resolve(tid));
        Files.writeString(tasks.resolve(tid).resolve("comm"), name + "\n");
    }
}
