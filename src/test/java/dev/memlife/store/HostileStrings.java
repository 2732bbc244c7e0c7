package dev.memlife.store;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.memlife.Message;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.statistics.StatisticsCollector;

/**
 * Generators of strings a store must keep exactly (jqwik): empty, about 1 MB, NUL, unpaired
 * surrogates, any UTF-16 code unit, any code point including supplementary ones, the escape
 * marker and escape-like text, SQL fragments, LIKE wildcards, path separators and newlines, and
 * near-collisions of one string (what a lossy or non-injective encoding would merge).
 */
final class HostileStrings {

    /** Pieces that hostile strings are made of; joined at random. */
    static final List<String> FRAGMENTS = List.of("", "\u0000", "\ud800", "\udc00", "\udbff\udfff",
            "\ud83d\ude42", "\u00e9", "e\u0301", "\u200b", "\ufeff", "\uffff", "\ufffe", String.valueOf(Codec.ESCAPED),
            "\\", "\\0", "\\\\", "\\u0000", "\\ud800", "?", "'", "\"", "`", "'; DROP TABLE turns; --",
            "Robert'); DELETE FROM memlife_turns WHERE ''=''; --", "%", "_", "[%]", "/", "\\..\\", "../../etc/passwd",
            "\n", "\r\n", "\r", "\t", " ", "chat:1", "user", "assistant");

    /** Length of the huge strings: about 1 MB of characters. */
    static final int HUGE = 1 << 20;

    private HostileStrings() {}

    /**
     * Any hostile string: fragments joined, any UTF-16 code units, any code points, strings that
     * start with the escape marker, stored forms of strings (what {@link Codec#text} writes), and
     * about one in 20 huge.
     */
    static Arbitrary<String> any() {
        Arbitrary<String> joined = Arbitraries.of(FRAGMENTS).list().ofMaxSize(8).map(parts -> String.join("", parts));
        return Arbitraries.frequencyOf(
                Tuple.of(14, joined),
                Tuple.of(12, Arbitraries.strings().all().ofMaxLength(40)),
                Tuple.of(10, Arbitraries.integers().between(0, Character.MAX_CODE_POINT).list().ofMaxSize(20)
                        .map(HostileStrings::fromCodePoints)),
                Tuple.of(3, joined.map(s -> Codec.ESCAPED + s)),
                Tuple.of(3, joined.map(Codec::text)),
                Tuple.of(2, Arbitraries.of(FRAGMENTS).filter(f -> !f.isEmpty())
                        .map(f -> f.repeat(HUGE / f.length() + 1))));
    }

    /**
     * Distinct strings that a lossy or non-injective encoding would store as one: {@code s}, {@code
     * s} with its surrogates as '?', without its NUL, behind the escape marker, its stored form
     * (and that form's), with a NUL after it, and behind a 200-character prefix that another member
     * shares (the length of the session index's key).
     */
    static Arbitrary<List<String>> nearCollisions() {
        return any().map(s -> List.of(s, s.replaceAll("[\ud800-\udfff]", "?"), s.replace("\u0000", ""),
                Codec.ESCAPED + s, Codec.text(s), Codec.text(Codec.text(s)), s + "\u0000",
                "k".repeat(Tables.SESSION_KEY_CHARS) + s, "k".repeat(Tables.SESSION_KEY_CHARS) + s + "?")
                .stream().distinct().toList());
    }

    /**
     * Counts, in jqwik's statistics, which kinds of hostile string one try wrote, and makes the
     * property fail unless its tries together wrote every kind at least once: a check that the
     * generators really produce what this class promises.
     */
    static void countKinds(List<String> written) {
        Map<String, Predicate<String>> kinds = new LinkedHashMap<>();
        kinds.put("empty", String::isEmpty);
        kinds.put("huge", s -> s.length() >= HUGE);
        kinds.put("NUL", s -> s.indexOf('\0') >= 0);
        kinds.put("unpaired surrogate", s -> !s.equals(new String(s.getBytes(UTF_8), UTF_8)));
        kinds.put("supplementary", s -> s.codePoints().anyMatch(Character::isSupplementaryCodePoint));
        kinds.put("escape marker first", s -> s.startsWith(String.valueOf(Codec.ESCAPED)));
        kinds.put("SQL", s -> s.contains("DROP TABLE") || s.contains("DELETE FROM"));
        kinds.put("LIKE wildcard", s -> s.contains("%") || s.contains("_"));
        kinds.put("path separator", s -> s.contains("/") || s.contains("\\"));
        kinds.put("newline", s -> s.contains("\n") || s.contains("\r"));
        StatisticsCollector statistics = Statistics.label("kinds written");
        kinds.forEach((kind, is) -> {
            if (written.stream().anyMatch(is)) {
                statistics.collect(kind);
            }
        });
        statistics.coverage(coverage -> kinds.keySet().forEach(kind -> coverage.check(kind).count(n -> n > 0)));
    }

    /** Lists of up to 3 messages whose roles and contents are hostile. */
    static Arbitrary<List<Message>> messageLists() {
        return Combinators.combine(any(), any()).as(Message::new).list().ofMaxSize(3);
    }

    /** The string of these code points; a surrogate code point becomes an unpaired surrogate. */
    private static String fromCodePoints(List<Integer> codePoints) {
        StringBuilder out = new StringBuilder();
        codePoints.forEach(out::appendCodePoint);
        return out.toString();
    }
}
