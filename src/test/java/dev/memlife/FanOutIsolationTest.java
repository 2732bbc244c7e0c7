package dev.memlife;

import static dev.memlife.HeldWrites.writeIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.memlife.testing.FailingProvider;
import dev.memlife.testing.HangingProvider;
import dev.memlife.testing.Hook;
import dev.memlife.testing.RecordingProvider;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Design section 2, contracts 3 and 7: every provider call is isolated; caller-thread hooks. */
@Timeout(30)
class FanOutIsolationTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void aFailingProviderDoesNotStopTheNextProviderOrTheWriter() {
        FailingProvider failing = new FailingProvider("failing", Hook.SYNC_TURN);
        RecordingProvider next = new RecordingProvider("next");
        MemoryManager m = MemoryManager.create();
        m.addProvider(failing);
        m.addProvider(next);

        for (int i = 0; i < 10; i++) {
            m.syncAll("u", "a" + i, "s");
        }

        assertThat(m.flushPending(Duration.ofSeconds(10))).isTrue();
        assertThat(next.turns()).hasSize(10);
        DrainReport report = m.stop();
        assertThat(report.failed()).isEqualTo(10);
        assertThat(report.failuresByProvider()).containsExactly(Map.entry("failing", 10L));
        assertThat(report.submitted()).isEqualTo(10);
    }

    @Test
    void anErrorOtherThanAVirtualMachineErrorIsIsolatedToo() {
        FailingProvider throwsErrors = new FailingProvider("errors", Set.of(Hook.SYNC_TURN), t -> true,
                hook -> new AssertionError("provider bug"));
        RecordingProvider next = new RecordingProvider("next");
        MemoryManager m = MemoryManager.create();
        m.addProvider(throwsErrors);
        m.addProvider(next);

        m.syncAll("u", "a", "s");
        m.syncAll("u", "b", "s");

        assertThat(m.flushPending(Duration.ofSeconds(10))).isTrue();
        assertThat(next.assistantContents()).containsExactly("a", "b");
        assertThat(m.writerThread().isAlive()).isTrue();
        assertThat(m.stop().failed()).isEqualTo(2);
    }

    /**
     * Regression (reliability issue, defect 6): a provider's StackOverflowError used to end the
     * writer and fail the whole batch for every provider. It is that provider's failure of that
     * write only: the writer lives on, the next provider still gets the write, and the writes
     * after it are delivered.
     */
    @Test
    void aStackOverflowErrorIsOnlyThatProvidersFailureOfThatWrite() throws Exception {
        FailingProvider overflow = new FailingProvider("overflow", Set.of(Hook.SYNC_TURN),
                t -> t.assistantContent().equals("first"), hook -> new StackOverflowError("simulated"));
        RecordingProvider after = new RecordingProvider("after");
        MemoryManager m = MemoryManager.create();
        m.addProvider(overflow);
        m.addProvider(after);
        m.syncAll("u", "first", "s");
        m.syncAll("u", "second", "s");
        assertThat(m.flushPending(Duration.ofSeconds(10))).isTrue();
        Thread writer = m.writerThread();

        DrainReport report = m.stop();

        assertThat(report.delivered()).isEqualTo(1);
        assertThat(after.turns()).extracting(Turn::assistantContent).containsExactly("first", "second");
        String firstId = after.turns().get(0).writeId();
        assertThat(report.failedWriteIds()).containsExactly(firstId);
        assertThat(report.statusOf(after.turns().get(1).writeId())).isEqualTo(WriteStatus.DELIVERED);
        assertThat(report.failuresByProvider()).isEqualTo(Map.of("overflow", 1L));
        assertThat(m.writerThread()).isSameAs(writer);
    }

    /**
     * Regression (reliability issue, defect 6), within a batch: one provider's StackOverflowError
     * failed the whole batch for every provider, including writes no provider ever saw, and
     * failuresByProvider did not name the provider.
     */
    @Test
    void aStackOverflowErrorFailsOnlyThatWriteForThatProvider() throws Exception {
        HeldWrites held = new HeldWrites("held").hold("w0");
        FailingProvider overflow = new FailingProvider("overflow", Set.of(Hook.SYNC_TURN),
                t -> t.assistantContent().equals("w2"), hook -> new StackOverflowError("simulated"));
        RecordingProvider last = new RecordingProvider("last");
        MemoryManager m = MemoryManager.create();
        m.addProvider(held);
        m.addProvider(overflow);
        m.addProvider(last);
        held.queueBehindHeld(m, "w0", List.of("w1", "w2", "w3", "w4"));
        held.release("w0");
        assertThat(m.flushPending(WAIT)).isTrue();

        DrainReport report = m.stop();

        assertThat(last.assistantContents()).containsExactly("w0", "w1", "w2", "w3", "w4");
        String w2 = last.turns().get(2).writeId();
        assertThat(report.failedWriteIds()).containsExactly(w2);
        assertThat(report.delivered()).isEqualTo(4);
        assertThat(report.failuresByProvider()).isEqualTo(Map.of("overflow", 1L));
    }

    /**
     * Regression (reliability issue, defect 5): a provider that left the writer's interrupt flag
     * set made the next provider's interruptible I/O fail ({@code ClosedByInterruptException}) on
     * every later write.
     */
    @Test
    void anInterruptLeftByOneProviderIsClearedBeforeTheNextOne(@TempDir Path dir) {
        RecordingProvider interrupter = new RecordingProvider("interrupter") {
            @Override
            public void syncTurn(Turn turn) {
                super.syncTurn(turn);
                Thread.currentThread().interrupt();
            }
        };
        List<String> written = new CopyOnWriteArrayList<>();
        MemoryProvider file = new MemoryProvider() {
            @Override
            public String name() {
                return "file";
            }

            @Override
            public void syncTurn(Turn turn) {
                try (FileChannel channel = FileChannel.open(dir.resolve("turns"), StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND)) { // interruptible I/O: fails at once if the flag is set
                    channel.write(ByteBuffer.wrap((turn.writeId() + "\n").getBytes(StandardCharsets.UTF_8)));
                    written.add(turn.writeId());
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }
        };
        MemoryManager m = MemoryManager.create();
        m.addProvider(interrupter);
        m.addProvider(file);
        for (int i = 0; i < 3; i++) {
            m.syncAll("u" + i, "a", "s");
        }

        DrainReport report = m.stop();

        assertThat(report.failed()).as("%s", report).isZero();
        assertThat(written).isEqualTo(writeIds(interrupter.turns())).hasSize(3);
        assertThat(report.interruptsByProvider()).isEqualTo(Map.of("interrupter", 3L));
    }

    @Test
    void callerThreadHooksAreCalledPerProviderAndIsolated() {
        Set<Hook> all = Set.of(Hook.INITIALIZE, Hook.SYSTEM_PROMPT, Hook.ON_SESSION_END);
        FailingProvider failing = new FailingProvider("failing", all, t -> true,
                hook -> new IllegalStateException("down"));
        RecordingProvider next = new RecordingProvider("next") {
            @Override
            public String systemPromptBlock() {
                return "remember: the user likes tea";
            }
        };
        MemoryManager m = MemoryManager.create();
        m.addProvider(failing);
        m.addProvider(next);

        m.initializeAll("s-1");
        String prompt = m.buildSystemPrompt();
        m.onSessionEnd(List.of(Message.user("bye")));

        assertThat(failing.events()).containsExactly("fail:INITIALIZE", "fail:SYSTEM_PROMPT", "fail:ON_SESSION_END");
        assertThat(next.events()).containsExactly("initialize:s-1", "on_session_end");
        assertThat(prompt).isEqualTo("remember: the user likes tea");
        m.stop();
    }

    @Test
    void onSessionEndRunsSynchronouslyOnTheCallersThreadWithACopyOfTheTranscript() {
        AtomicReference<Thread> calledOn = new AtomicReference<>();
        RecordingProvider provider = new RecordingProvider("rec") {
            @Override
            public void onSessionEnd(List<Message> messages) {
                calledOn.set(Thread.currentThread());
                super.onSessionEnd(messages);
            }
        };
        MemoryManager m = MemoryManager.create();
        m.addProvider(provider);
        List<Message> transcript = new ArrayList<>(List.of(Message.user("hi"), Message.assistant("hello")));

        m.onSessionEnd(transcript);
        transcript.clear();

        assertThat(calledOn.get()).isSameAs(Thread.currentThread());
        assertThat(provider.sessionEnds()).containsExactly(List.of(Message.user("hi"), Message.assistant("hello")));
        m.stop();
        assertThatThrownBy(() -> m.onSessionEnd(List.of()))
                .isInstanceOf(StoppedException.class).hasMessageContaining("is stopped; onSessionEnd refused");
    }

    @Test
    void prefetchIsBoundedPerProviderAndKeepsTheOthersAnswers() {
        HangingProvider hanging = new HangingProvider("hangs", Hook.PREFETCH);
        RecordingProvider answers = new RecordingProvider("answers") {
            @Override
            public String prefetch(String query, String sessionId) {
                return "recalled for " + query;
            }
        };
        MemoryManager m = MemoryManager.builder().prefetchTimeout(Duration.ofSeconds(1)).build();
        m.addProvider(hanging);
        m.addProvider(answers);
        try {
            long start = System.nanoTime();
            String recalled = m.prefetchAll("tea", "s");
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertThat(recalled).isEqualTo("recalled for tea");
            assertThat(millis).isLessThan(1_000 + 2_000);
        } finally {
            hanging.release();
        }
        m.stop();
    }

    @Test
    void prefetchJoinsBlocksInRegistrationOrder() {
        MemoryManager m = MemoryManager.create();
        for (String name : List.of("one", "blank", "two")) {
            m.addProvider(new RecordingProvider(name) {
                @Override
                public String prefetch(String query, String sessionId) {
                    return name.equals("blank") ? "  " : name + ":" + query;
                }
            });
        }

        assertThat(m.prefetchAll("q", "s")).isEqualTo("one:q\n\ntwo:q");
        m.stop();
    }

    @Test
    void toolCallsGoToTheProviderThatOffersTheTool() {
        MemoryManager m = MemoryManager.create();
        m.addProvider(toolProvider("notes", "remember", "notes did it"));
        m.addProvider(toolProvider("facts", "recall", "facts did it"));

        assertThat(m.toolSchemas()).extracting(ToolSchema::name).containsExactly("remember", "recall");
        assertThat(m.handleToolCall("recall", Map.of("q", "x"))).isEqualTo("facts did it");
        assertThat(m.handleToolCall("remember", Map.of())).isEqualTo("notes did it");
        m.stop();
    }

    @Test
    void aToolNameRegisteredTwiceKeepsTheFirstProvider() {
        MemoryManager m = MemoryManager.create();
        m.addProvider(toolProvider("first", "remember", "first"));
        m.addProvider(toolProvider("second", "remember", "second"));

        assertThat(m.toolSchemas()).extracting(ToolSchema::name).containsExactly("remember");
        assertThat(m.handleToolCall("remember", Map.of())).isEqualTo("first");
        m.stop();
    }

    /** hermes-agent {@code agent/memory_manager.py}, {@code handle_tool_call}: the model sees an error result. */
    @Test
    void anUnknownToolIsAnsweredWithAnErrorResultNotAnException() {
        MemoryManager m = MemoryManager.create();
        m.addProvider(toolProvider("notes", "remember", "ok"));

        assertThat(m.handleToolCall("forget", Map.of()))
                .isEqualTo("{\"error\":\"No memory provider handles tool 'forget'\"}");
        assertThat(m.hasTool("forget")).isFalse();
        assertThat(m.hasTool("remember")).isTrue();
        m.stop();
    }

    @Test
    void aFailingToolCallReturnsAnErrorToTheModel() {
        MemoryManager m = MemoryManager.create();
        m.addProvider(new RecordingProvider("broken") {
            @Override
            public List<ToolSchema> toolSchemas() {
                return List.of(ToolSchema.of("remember", "stores a fact"));
            }

            @Override
            public String handleToolCall(String tool, Map<String, Object> args) {
                throw new IllegalStateException("store \"down\"");
            }
        });

        String result = m.handleToolCall("remember", Map.of());

        assertThat(result).startsWith("{\"error\":").contains("remember").contains("store \\\"down\\\"");
        m.stop();
    }

    private static RecordingProvider toolProvider(String name, String tool, String answer) {
        return new RecordingProvider(name) {
            @Override
            public List<ToolSchema> toolSchemas() {
                return List.of(ToolSchema.of(tool, "a tool"));
            }

            @Override
            public String handleToolCall(String t, Map<String, Object> args) {
                return answer;
            }
        };
    }
}
