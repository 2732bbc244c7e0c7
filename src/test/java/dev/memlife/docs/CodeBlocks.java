package dev.memlife.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The fenced code blocks of the README and {@code docs/}, read as a user reads them, with the
 * markers that say how a Java block is checked. A marker is an HTML comment (invisible on the
 * rendered page) on the lines just above the fence:
 *
 * <ul>
 *   <li>{@code <!-- given: MemoryManager memory, String sessionId -->}: the block is a fragment
 *       that uses these names; they become the parameters of the method it is compiled in.
 *   <li>{@code <!-- imports: dev.memlife.langchain4j.* -->}: imports a fragment needs beyond the
 *       {@linkplain #FRAGMENT_IMPORTS usual ones}.
 *   <li>{@code <!-- run -->}: the block is also run (a fragment with no {@code given}, or a
 *       compilation unit with a {@code main}).
 * </ul>
 *
 * <p>A Java block that declares a top-level type is a compilation unit and must carry its own
 * imports, as a user would paste it; any other Java block is a fragment.
 */
final class CodeBlocks {

    /** What a fragment may use without importing, as the guides' prose assumes. */
    static final List<String> FRAGMENT_IMPORTS = List.of(
            "dev.memlife.*", "dev.memlife.agent.*", "dev.memlife.gateway.*", "dev.memlife.session.*",
            "dev.memlife.store.*", "dev.memlife.spool.*", "dev.memlife.testing.*", "java.time.*",
            "java.util.*", "java.nio.file.*");

    private static final Pattern FENCE = Pattern.compile("^\\s*```(\\S*)\\s*$");
    private static final Pattern MARKER = Pattern.compile("^\\s*<!--\\s*(given|imports|run)\\s*:?\\s*(.*?)\\s*-->\\s*$");
    private static final Pattern TYPE_DECLARATION = Pattern.compile(
            "(?m)^(public\\s+|final\\s+|abstract\\s+|sealed\\s+)*(class|record|interface|enum|@interface)\\s+(\\w+)");

    /** One fenced block: where it stands, its language, its text and its markers. */
    record Block(Path file, int firstLine, String language, String text, Map<String, String> markers) {

        String where() {
            return file + ":" + firstLine;
        }

        boolean isJava() {
            return language.equals("java");
        }

        boolean isUnit() {
            return TYPE_DECLARATION.matcher(text).find();
        }

        boolean run() {
            return markers.containsKey("run");
        }

        List<String> given() {
            String given = markers.getOrDefault("given", "");
            return given.isBlank() ? List.of() : List.of(given.split("\\s*,\\s*"));
        }

        List<String> imports() {
            String imports = markers.getOrDefault("imports", "");
            return imports.isBlank() ? List.of() : List.of(imports.split("\\s*[,\\s]\\s*"));
        }

        /** The first top-level type a unit declares. */
        String declaredType() {
            Matcher m = TYPE_DECLARATION.matcher(text);
            if (!m.find()) {
                throw new IllegalStateException(where() + " declares no type");
            }
            return m.group(3);
        }
    }

    private CodeBlocks() {}

    /** The README and every Markdown file under {@code docs/}, in a stable order. */
    static List<Path> documents(Path root) throws IOException {
        List<Path> documents = new ArrayList<>();
        documents.add(root.resolve("README.md"));
        Path docs = root.resolve("docs");
        if (Files.isDirectory(docs)) {
            try (Stream<Path> files = Files.walk(docs)) {
                files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(documents::add);
            }
        }
        return documents;
    }

    /** Every fenced block of one document; a fence left open is an error, not a block dropped. */
    static List<Block> read(Path root, Path document) throws IOException {
        List<String> lines = Files.readAllLines(document);
        Path name = root.relativize(document);
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches()) {
                continue;
            }
            int start = i;
            StringBuilder text = new StringBuilder();
            i++;
            while (i < lines.size() && !FENCE.matcher(lines.get(i)).matches()) {
                text.append(lines.get(i)).append('\n');
                i++;
            }
            if (i == lines.size()) {
                throw new IllegalStateException(name + ":" + (start + 1) + ": a code fence that is never closed");
            }
            blocks.add(new Block(name, start + 2, open.group(1), text.toString(), markersAbove(lines, start)));
        }
        return blocks;
    }

    private static Map<String, String> markersAbove(List<String> lines, int fence) {
        Map<String, String> markers = new LinkedHashMap<>();
        for (int j = fence - 1; j >= 0; j--) {
            Matcher m = MARKER.matcher(lines.get(j));
            if (!m.matches()) {
                break;
            }
            markers.put(m.group(1), m.group(2));
        }
        return markers;
    }
}
