package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.memlife.agent.AgentMemory;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad input gets a clear error that names what was wrong, and loses nothing. */
class BadInputTest {

    private static final MemoryManager MANAGER = MemoryManager.create();

    @AfterEach
    void checkNothingWasQueued() {
        assertThat(MANAGER.pendingWrites()).isZero();
    }

    static Stream<Arguments> nullArguments() {
        MemoryManager m = MANAGER;
        return Stream.of(
                nul("provider", () -> m.addProvider(null)),
                nul("sessionId", () -> m.initializeAll(null)),
                nul("userContent", () -> m.syncAll(null, "a", "s")),
                nul("assistantContent", () -> m.syncAll("u", null, "s")),
                nul("sessionId", () -> m.syncAll("u", "a", null)),
                nul("messages", () -> m.syncAll("u", "a", "s", null)),
                nul("messages[1]", () -> m.syncAll("u", "a", "s", Arrays.asList(Message.user("x"), null))),
                nul("query", () -> m.prefetchAll(null, "s")),
                nul("tool", () -> m.handleToolCall(null, Map.of())),
                nul("args", () -> m.handleToolCall("t", null)),
                nul("messages", () -> m.onSessionEnd(null)),
                nul("budget", () -> m.stop(null)),
                nul("drainTimeout", () -> MemoryManager.builder().drainTimeout(null)),
                nul("ticker", () -> MemoryManager.builder().ticker(null)),
                nul("threadFactory", () -> MemoryManager.builder().threadFactory(null)),
                nul("role", () -> new Message(null, "x")),
                nul("content", () -> Message.user(null)),
                nul("writeId", () -> Turn.of(null, "s", "u", "a", List.of(), Instant.now())));
    }

    private static Arguments nul(String parameter, ThrowingCallable call) {
        return Arguments.of(parameter, call);
    }

    @ParameterizedTest(name = "null {0}")
    @MethodSource("nullArguments")
    void nullArgumentsThrowNamingTheParameter(String parameter, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOf(NullPointerException.class).hasMessage(parameter);
    }

    @Test
    void aProviderWithADuplicateNameIsRefused() {
        MemoryManager m = MemoryManager.builder().name("dup").build();
        m.addProvider(new RecordingProvider("store"));

        assertThatThrownBy(() -> m.addProvider(new RecordingProvider("store")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'store'").hasMessageContaining("'dup'");
        assertThat(m.providerNames()).containsExactly("store");
    }

    @Test
    void anUnavailableProviderIsNotRegistered() {
        MemoryManager m = MemoryManager.create();
        boolean added = m.addProvider(new RecordingProvider("offline") {
            @Override
            public boolean isAvailable() {
                return false;
            }
        });
        boolean broken = m.addProvider(new RecordingProvider("broken") {
            @Override
            public boolean isAvailable() {
                throw new IllegalStateException("no credentials");
            }
        });

        assertThat(added).isFalse();
        assertThat(broken).isFalse();
        assertThat(m.providerNames()).isEmpty();
    }

    @Test
    void aProviderWithABlankNameIsRefused() {
        assertThatThrownBy(() -> MemoryManager.create().addProvider(new RecordingProvider(" ")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("blank");
    }

    @Test
    void addingAProviderAfterShutdownIsRefused() {
        MemoryManager m = MemoryManager.create();
        m.stop();

        assertThatThrownBy(() -> m.addProvider(new RecordingProvider("late")))
                .isInstanceOf(StoppedException.class)
                .hasMessage("memory manager '" + m.name() + "' is stopped; addProvider refused");
    }

    @Test
    void builderRejectsInvalidSettingsNamingThem() {
        MemoryManager.Builder b = MemoryManager.builder();
        assertThatThrownBy(() -> b.queueCapacity(0)).hasMessageContaining("queueCapacity").hasMessageContaining("0");
        assertThatThrownBy(() -> b.maxBatchSize(-1)).hasMessageContaining("maxBatchSize");
        assertThatThrownBy(() -> b.drainTimeout(Duration.ofMillis(-1))).hasMessageContaining("drainTimeout");
        assertThatThrownBy(() -> b.prefetchTimeout(Duration.ZERO)).hasMessageContaining("prefetchTimeout must be positive");
        assertThatThrownBy(() -> b.enqueueTimeout(Duration.ofSeconds(-1))).hasMessageContaining("enqueueTimeout");
        assertThatThrownBy(() -> b.name(" ")).hasMessageContaining("name");
    }

    /**
     * Regression (reliability issue, defect 10a): builder setters accepted durations too large to
     * use; one failed much later with {@code ArithmeticException}, after {@code reset()} had
     * already taken the agent out.
     */
    @Test
    void durationsTooLargeToMeasureAreRefusedAtTheSetter() {
        Duration huge = Duration.ofSeconds(Long.MAX_VALUE);
        assertThatThrownBy(() -> MemoryManager.builder().drainTimeout(huge))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("drainTimeout");
        assertThatThrownBy(() -> AgentGateway.builder().resetTimeout(huge))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("resetTimeout");
        assertThatThrownBy(() -> AgentMemory.builder(MemoryManager.create()).flushTimeout(huge))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flushTimeout");
        assertThatThrownBy(() -> MemoryManager.builder().providerShutdownTimeout(huge))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("providerShutdownTimeout");
    }

    @Test
    void aReusedBuilderDoesNotChangeWhatItAlreadyBuilt() {
        MemoryManager.Builder b = MemoryManager.builder().drainTimeout(Duration.ofSeconds(3));
        MemoryManager first = b.build();
        b.drainTimeout(Duration.ofSeconds(9));

        assertThat(first.stop().budget()).isEqualTo(Duration.ofSeconds(3));
        assertThat(b.build().stop().budget()).isEqualTo(Duration.ofSeconds(9));
    }

    @Test
    void theDefaultDrainTimeoutIsFiveSeconds() {
        assertThat(MemoryManager.create().stop().budget()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void aToolSchemaNeedsAName() {
        assertThatThrownBy(() -> ToolSchema.of(" ", "d")).isInstanceOf(IllegalArgumentException.class);
    }
}
