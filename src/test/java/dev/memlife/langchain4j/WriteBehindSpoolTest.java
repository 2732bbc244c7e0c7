package dev.memlife.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import dev.memlife.WriteBehindReport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The write-behind store's spool: every state handed over is in it before the call returns, and
 * the next store built on the same directory reads it back before its backend has it and writes
 * it there. (Surviving kill -9 itself, a real child JVM: {@code spring.SpringCrashProcessTest}.)
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WriteBehindSpoolTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    @Test
    void whatAStopLeftUnwrittenIsReadBackAndWrittenByTheNextStoreOnTheSpool() throws Exception {
        SlowChatMemoryStore held = new SlowChatMemoryStore();
        held.hold();
        WriteBehindChatMemoryStore first = WriteBehindChatMemoryStore.builder(held).spool(dir).build();
        UUID b = UUID.randomUUID();
        first.updateMessages("a", List.of(UserMessage.from("a1")));
        assertThat(held.awaitEntered(WAIT)).as("the backend holds the first write").isTrue();
        first.updateMessages("a", List.of(UserMessage.from("a1"), AiMessage.from("a2")));
        first.updateMessages(b, List.of(UserMessage.from("b1")));
        first.updateMessages(7, List.of(UserMessage.from("seven")));
        first.deleteMessages(7);
        WriteBehindReport<Object> ended = first.stop(Duration.ZERO);
        assertThat(ended.complete()).as("the backend wrote none of it").isFalse();
        held.open();

        InMemoryChatMemoryStore fresh = new InMemoryChatMemoryStore();
        WriteBehindChatMemoryStore next = WriteBehindChatMemoryStore.builder(fresh).spool(dir).build();
        assertThat(next.getMessages("a")).as("read back before anything is written")
                .containsExactly(UserMessage.from("a1"), AiMessage.from("a2"));
        assertThat(next.getMessages(b)).containsExactly(UserMessage.from("b1"));
        assertThat(next.getMessages(7)).isEmpty();
        assertThat(next.flush(WAIT)).isTrue();
        assertThat(fresh.getMessages("a")).containsExactly(UserMessage.from("a1"), AiMessage.from("a2"));
        assertThat(fresh.getMessages(b)).as("its id kept as a UUID").containsExactly(UserMessage.from("b1"));
        assertThat(next.stop(WAIT).complete()).isTrue();

        WriteBehindChatMemoryStore third = WriteBehindChatMemoryStore.builder(new InMemoryChatMemoryStore()).spool(dir)
                .build();
        assertThat(third.figures().pending()).as("a complete stop leaves nothing to replay").isZero();
        third.close();
    }

    @Test
    void aManagersSpoolDirectoryLeavesAWriteBehindSpoolInsideItAlone() throws Exception {
        Path inside = dir.resolve("chat");
        SlowChatMemoryStore held = new SlowChatMemoryStore();
        held.hold();
        WriteBehindChatMemoryStore first = WriteBehindChatMemoryStore.builder(held).spool(inside).build();
        first.updateMessages("a", List.of(UserMessage.from("a1")));
        first.stop(Duration.ZERO);
        held.open();

        dev.memlife.spool.SpoolDirectory.Recovery recovery = dev.memlife.spool.SpoolDirectory.open(dir)
                .recover(WAIT, new dev.memlife.testing.RecordingProvider("store"));

        assertThat(recovery.spools()).as("not taken for a manager's spool").isEmpty();
        InMemoryChatMemoryStore fresh = new InMemoryChatMemoryStore();
        try (WriteBehindChatMemoryStore next = WriteBehindChatMemoryStore.builder(fresh).spool(inside).build()) {
            assertThat(next.getMessages("a")).as("still its own store's to replay").containsExactly(UserMessage.from("a1"));
        }
    }

    @Test
    void aMemoryIdTheSpoolCannotKeepIsRefusedAndNothingIsTaken() {
        InMemoryChatMemoryStore backend = new InMemoryChatMemoryStore();
        try (WriteBehindChatMemoryStore store = WriteBehindChatMemoryStore.builder(backend).spool(dir).build()) {
            Object odd = new Object() {
                @Override
                public String toString() {
                    return "odd";
                }
            };
            List<ChatMessage> state = List.of(UserMessage.from("x"));
            assertThatThrownBy(() -> store.updateMessages(odd, state)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("String, Integer, Long or UUID").hasMessageContaining("odd");
            assertThat(store.figures().saves()).isZero();
            assertThat(store.figures().rejected()).isEqualTo(1);
        }
    }

    @Test
    void durableWithoutASpoolAndASecondStoreOnOneSpoolAreRefusedByName() {
        assertThatThrownBy(() -> WriteBehindChatMemoryStore.builder(new InMemoryChatMemoryStore()).durable(true).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("durable(true) needs a spool");
        try (WriteBehindChatMemoryStore one = WriteBehindChatMemoryStore.builder(new InMemoryChatMemoryStore()).spool(dir)
                .durable(true).build()) {
            one.updateMessages("a", List.of(UserMessage.from("on disk")));
            assertThatThrownBy(() -> WriteBehindChatMemoryStore.builder(new InMemoryChatMemoryStore()).spool(dir).build())
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("in use");
        }
    }
}
