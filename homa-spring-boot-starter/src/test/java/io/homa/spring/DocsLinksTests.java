package io.homa.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every link in README.md and docs/ leads somewhere: a relative link names a file or directory that
 * exists, and an anchor ({@code #section}, {@code file.md#section}) is the GitHub slug of a heading
 * of that Markdown file. Links to other sites ({@code http:}, {@code https:}, {@code mailto:}) are
 * not followed.
 */
class DocsLinksTests {

    /** An inline link or image, {@code [text](target)} or {@code [text](target "title")}; text may hold [brackets]. */
    private static final Pattern LINK = Pattern.compile(
            "\\[(?:[^\\[\\]]|\\[[^\\[\\]]*\\])*\\]\\(\\s*<?([^)\\s>]*)>?(?:\\s+\"[^\"]*\")?\\s*\\)");

    private static final Pattern CODE_SPAN = Pattern.compile("(`+)(?:(?!\\1).)+?\\1");

    private static final Pattern FENCE = Pattern.compile("^\\s*(```|~~~)");

    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");

    private final Map<Path, Set<String>> anchors = new HashMap<>();

    @Test
    void shouldLeadEveryLinkSomewhere() {
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path doc : RepositoryDocs.markdownFiles()) {
            List<String> lines = linesOutsideCode(RepositoryDocs.read(doc), true);
            for (int i = 0; i < lines.size(); i++) {
                Matcher link = LINK.matcher(lines.get(i));
                while (link.find()) {
                    String problem = problem(doc, link.group(1));
                    if (problem != null) {
                        broken.add(RepositoryDocs.name(doc) + ":" + (i + 1) + ": " + link.group(1) + ": " + problem);
                    }
                    checked++;
                }
            }
        }
        assertThat(checked).as("links found").isPositive();
        assertThat(broken).as("links in README.md and docs/ that lead nowhere").isEmpty();
    }

    @Test
    void shouldSlugHeadingsAsGitHubDoes() {
        assertThat(slugs("# Protocol status and wire extensions\n## Services and clients\n"))
                .containsExactly("protocol-status-and-wire-extensions", "services-and-clients");
        assertThat(slugs("## The project's own tests\n### `homa.server.*`: the [server](x.md)\n"))
                .containsExactly("the-projects-own-tests", "homaserver-the-server");
        assertThat(slugs("## Notes\n```\n## not a heading\n```\n## Notes\n## Notes\n"))
                .containsExactly("notes", "notes-1", "notes-2");
    }

    @Test
    void shouldFindBrokenLinks() {
        Path readme = RepositoryDocs.root().resolve("README.md");
        assertThat(problem(readme, "docs/no-such-page.md")).contains("no such file");
        assertThat(problem(readme, "docs/README.md#no-such-section")).contains("no heading");
        assertThat(problem(readme, "#no-such-section")).contains("no heading");
        assertThat(problem(readme, "docs/README.md")).isNull();
        assertThat(problem(readme, "https://example.com/#anything")).isNull();
        assertThat(LINK.matcher("see [`homa` [cli]](docs/x.md#y \"title\")").results().map((m) -> m.group(1)))
                .containsExactly("docs/x.md#y");
    }

    /** Why the link from {@code doc} to {@code target} leads nowhere, or null when it leads somewhere. */
    private String problem(Path doc, String target) {
        if (target.isEmpty()) {
            return "empty link";
        }
        if (target.matches("(?i)(https?|mailto):.*")) {
            return null;
        }
        int hash = target.indexOf('#');
        String path = URLDecoder.decode(hash < 0 ? target : target.substring(0, hash), StandardCharsets.UTF_8);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path file = path.isEmpty() ? doc : doc.toAbsolutePath().getParent().resolve(path).normalize();
        if (!Files.exists(file)) {
            return "no such file " + RepositoryDocs.name(file);
        }
        if (anchor == null) {
            return null;
        }
        if (!file.getFileName().toString().endsWith(".md") || !Files.isRegularFile(file)) {
            return "an anchor into a file that is not Markdown";
        }
        Set<String> known = this.anchors.computeIfAbsent(file, (md) -> slugs(RepositoryDocs.read(md)));
        return known.contains(URLDecoder.decode(anchor, StandardCharsets.UTF_8)) ? null
                : "no heading with the anchor #" + anchor + " in " + RepositoryDocs.name(file);
    }

    /** The anchors GitHub gives the headings of a Markdown text, in order (a repeated one gets -1, -2, ...). */
    static Set<String> slugs(String markdown) {
        Set<String> slugs = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : linesOutsideCode(markdown, false)) {
            Matcher heading = HEADING.matcher(line);
            if (heading.matches()) {
                String slug = slug(heading.group(1));
                int count = seen.merge(slug, 1, Integer::sum);
                slugs.add(count == 1 ? slug : slug + "-" + (count - 1));
            }
        }
        return slugs;
    }

    /** GitHub's slug of a heading: its text as rendered, lower case, punctuation dropped, spaces as hyphens. */
    private static String slug(String heading) {
        String text = heading.replaceAll("!?\\[((?:[^\\[\\]]|\\[[^\\[\\]]*\\])*)\\]\\([^)]*\\)", "$1")
                .replaceAll("<[^>]+>", "")
                .replace("`", "");
        return text.toLowerCase(Locale.ROOT)
                .replaceAll("[^\\p{L}\\p{M}\\p{N}\\p{Pc} -]", "")
                .replace(' ', '-');
    }

    /**
     * The lines of a Markdown text with fenced code blocks blanked, and code spans too when asked (a link
     * there is code; a heading's code span is part of its anchor).
     */
    private static List<String> linesOutsideCode(String markdown, boolean blankCodeSpans) {
        List<String> lines = new ArrayList<>();
        String fence = null;
        for (String line : markdown.split("\n", -1)) {
            Matcher opening = FENCE.matcher(line);
            if (fence == null && opening.find()) {
                fence = opening.group(1);
                lines.add("");
            } else if (fence != null) {
                if (line.strip().startsWith(fence)) {
                    fence = null;
                }
                lines.add("");
            } else {
                lines.add(blankCodeSpans ? CODE_SPAN.matcher(line).replaceAll("") : line);
            }
        }
        return lines;
    }
}
