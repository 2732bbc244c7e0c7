package dev.memlife.springai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.memlife.spool.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spring AI's long-term memory door in real child JVMs ({@link VectorMemoryChildMain}): a {@code
 * ChatClient} with {@code VectorStoreChatMemoryAdvisor} over the write-behind vector store, over a
 * vector store on the real MiniLM model saved to a file after every write. A turn is acknowledged
 * once its request returned; after SIGTERM every acknowledged turn's two messages are in the store
 * file, once each; with the spool, after SIGKILL and a restart on the same spool too, also when the
 * store behind took nothing before the kill.
 */
@Timeout(300)
class VectorMemoryProcessTest {

    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final int ACKNOWLEDGED = 24;

    @TempDir
    Path dir;

    @Test
    void sigtermMidLoadLeavesEveryAcknowledgedTurnInTheVectorStore() throws Exception {
        Path file = dir.resolve("store.json");
        try (ChildJvm child = ChildJvm.start("sigterm", dir, VectorMemoryChildMain.class, "serve", file.toString(), "-")) {
            child.awaitDurable(ACKNOWLEDGED, WAIT);
            child.terminate();
            assertThat(child.awaitExit(WAIT)).as(child.stderr()).isEqualTo(143);
            assertEveryAcknowledgedTurnStoredOnce(child.durable(), file, child.stderr());
        }
    }

    @Test
    void sigkillWithTheStoreBehindHeldLosesNoAcknowledgedTurnWithASpool() throws Exception {
        Path file = dir.resolve("store.json");
        Path spool = dir.resolve("spool");
        List<String> acknowledged = killMidLoad("held", file, spool, true);
        assertThat(file).as("the store behind took nothing: every acknowledged turn is only in the spool").doesNotExist();

        recover(file, spool);

        assertEveryAcknowledgedTurnStoredOnce(acknowledged, file, "");
    }

    @Test
    void sigkillAtAnyPointLosesNoAcknowledgedTurnWithASpool() throws Exception {
        Path file = dir.resolve("store.json");
        Path spool = dir.resolve("spool");
        List<String> acknowledged = killMidLoad("free", file, spool, false);

        recover(file, spool);

        assertEveryAcknowledgedTurnStoredOnce(acknowledged, file, "");
    }

    /** Serves with a spool (the store behind held or not), SIGKILLs mid-load; {@return the turns acknowledged} */
    private List<String> killMidLoad(String name, Path file, Path spool, boolean held) throws Exception {
        try (ChildJvm child = ChildJvm.start(name, dir, VectorMemoryChildMain.class, "serve", file.toString(),
                spool.toString(), String.valueOf(held))) {
            child.awaitDurable(ACKNOWLEDGED, WAIT);
            child.kill(WAIT);
            return child.durable();
        }
    }

    private void recover(Path file, Path spool) throws Exception {
        try (ChildJvm child = ChildJvm.start("recover", dir, VectorMemoryChildMain.class, "recover", file.toString(),
                spool.toString())) {
            assertThat(child.awaitLine("RECOVERED", WAIT)).as(child.stderr()).startsWith("RECOVERED true");
            assertThat(child.awaitExit(WAIT)).isZero();
        }
    }

    /** Every acknowledged turn's user message and answer are in the store file, each once, in its conversation. */
    private static void assertEveryAcknowledgedTurnStoredOnce(List<String> acknowledged, Path file, String stderr)
            throws Exception {
        assertThat(acknowledged).hasSizeGreaterThanOrEqualTo(ACKNOWLEDGED);
        assertThat(file).as(stderr).exists();
        Map<String, Integer> times = new HashMap<>();
        Map<String, String> conversation = new HashMap<>();
        JsonNode stored = new ObjectMapper().readTree(Files.readString(file));
        stored.fields().forEachRemaining(e -> {
            String text = e.getValue().get("text").asText();
            times.merge(text, 1, Integer::sum);
            conversation.put(text, e.getValue().get("metadata").get("conversationId").asText());
        });
        List<String> missing = new ArrayList<>();
        for (String turn : acknowledged) {
            for (String text : List.of(turn, "noted: " + turn)) {
                if (!times.containsKey(text)) {
                    missing.add(text);
                    continue;
                }
                assertThat(times.get(text)).as(text + " stored once").isEqualTo(1);
                assertThat(conversation.get(text)).as(text).isEqualTo(turn.split("-")[1]);
            }
        }
        assertThat(missing).as("acknowledged, not in the store (of %d acknowledged, %d stored)", acknowledged.size(),
                times.size()).isEmpty();
    }
}
