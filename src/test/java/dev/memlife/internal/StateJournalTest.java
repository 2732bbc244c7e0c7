package dev.memlife.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The write-behind spool's file: what a run appends, the next one reads back, last state per id. */
@Timeout(30)
class StateJournalTest {

    /** Ids and messages as strings; a state is its messages joined by '|'. */
    static final StateJournal.Codec<String, String> STRINGS = new StateJournal.Codec<>() {
        @Override
        public byte[] id(String id) {
            if (id.startsWith("bad")) {
                throw new IllegalArgumentException("cannot keep " + id);
            }
            return id.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String id(byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }

        @Override
        public byte[] state(List<String> state) {
            return String.join("|", state).getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public List<String> state(byte[] bytes) {
            String s = new String(bytes, StandardCharsets.UTF_8);
            return s.isEmpty() ? List.of() : Arrays.asList(s.split("\\|"));
        }
    };

    @TempDir
    Path dir;

    private StateJournal<String, String> open() {
        return StateJournal.open(dir, STRINGS, false);
    }

    @Test
    void theNextRunReadsEachIdsLastStateInTheOrderTheIdsLastCame() {
        try (StateJournal<String, String> j = open()) {
            assertThat(j.replayed()).isEmpty();
            j.append("a", List.of("a1"), List::of);
            j.append("b", List.of("b1"), List::of);
            j.append("a", List.of("a1", "a2"), List::of);
            j.append("c", List.of("c1"), List::of);
            j.append("c", null, List::of); // deleted
        }
        try (StateJournal<String, String> again = open()) {
            assertThat(again.replayed()).containsExactly(new StateJournal.Entry<>("b", List.of("b1")),
                    new StateJournal.Entry<>("a", List.of("a1", "a2")), new StateJournal.Entry<>("c", null));
        }
    }

    @Test
    void aTornTailIsCutOffAndWhatCameBeforeItIsKept() throws Exception {
        try (StateJournal<String, String> j = open()) {
            j.append("a", List.of("a1"), List::of);
            j.append("b", List.of("b1"), List::of);
        }
        Path file = dir.resolve("states.log");
        long whole = Files.size(file);
        Files.write(file, new byte[] {0, 0, 0, 40, 1, 2, 3}, StandardOpenOption.APPEND); // a record cut short
        try (StateJournal<String, String> again = open()) {
            assertThat(again.replayed()).extracting(StateJournal.Entry::id).containsExactly("a", "b");
            assertThat(Files.size(file)).as("cut back to the last whole record").isEqualTo(whole);
        }
        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length - 1] ^= 0x5a; // the last record's state, damaged: its checksum fails
        Files.write(file, bytes);
        try (StateJournal<String, String> again = open()) {
            assertThat(again.replayed()).extracting(StateJournal.Entry::id).containsExactly("a");
        }
    }

    @Test
    void clearEmptiesItAndAnIdItCannotKeepAppendsNothing() {
        try (StateJournal<String, String> j = open()) {
            j.append("a", List.of("a1"), List::of);
            assertThatThrownBy(() -> j.append("bad-id", List.of("x"), List::of))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad-id");
            j.clear();
            assertThat(j.size()).isZero();
            j.append("b", List.of("b1"), List::of);
        }
        try (StateJournal<String, String> again = open()) {
            assertThat(again.replayed()).extracting(StateJournal.Entry::id).containsExactly("b");
        }
    }

    @Test
    void pastItsBoundTheFileIsRewrittenWithOnlyWhatStillWaits() {
        String big = "x".repeat(64 * 1024);
        try (StateJournal<String, String> j = open()) {
            for (int i = 0; j.size() < StateJournal.COMPACT_AT - 100_000; i++) {
                j.append("old-" + i, List.of(big), List::of);
            }
            j.append("w", List.of(big), () -> List.of(new StateJournal.Entry<>("live", List.of("l1"))));
            j.append("w2", List.of("small"), () -> List.of(new StateJournal.Entry<>("live", List.of("l1"))));
            assertThat(j.size()).as("rewritten: the live state, then what came after").isLessThan(StateJournal.COMPACT_AT / 2);
        }
        try (StateJournal<String, String> again = open()) {
            assertThat(again.replayed()).extracting(StateJournal.Entry::id).as("the old ones gone").containsExactly("live", "w", "w2");
        }
    }

    @Test
    void aSecondOpenOfTheSameDirectoryIsRefusedByName() {
        try (StateJournal<String, String> j = open()) {
            assertThatThrownBy(this::open).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(dir.toString()).hasMessageContaining("in use");
        }
        open().close(); // free again once closed
    }
}
