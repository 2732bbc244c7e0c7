package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.memlife.testing.RecordingProvider;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The provider hooks beyond writes and extraction, each isolated like the others: a provider that
 * throws is skipped and the next one still called. Each mirrors a hook of hermes-agent's {@code
 * agent/memory_manager.py}, named in the test.
 */
@Timeout(30)
class ProviderHooksTest {

    /** Records every hook it gets; throws from every hook if {@code failing}. */
    private static final class Hooked extends RecordingProvider {
        private final boolean failing;
        private final String preCompress;

        Hooked(String name, boolean failing, String preCompress) {
            super(name);
            this.failing = failing;
            this.preCompress = preCompress;
        }

        private void hook(String event) {
            record(event);
            if (failing) {
                throw new IllegalStateException(name() + " fails " + event);
            }
        }

        @Override
        public void onTurnStart(int turnNumber, String message) {
            hook("turnStart:" + turnNumber + ":" + message);
        }

        @Override
        public String onPreCompress(List<Message> messages) {
            hook("preCompress:" + messages.size());
            return preCompress;
        }

        @Override
        public void onMemoryWrite(String action, String target, String content) {
            hook("memoryWrite:" + action + ":" + target + ":" + content);
        }

        @Override
        public void onDelegation(String task, String result, String childSessionId) {
            hook("delegation:" + task + ":" + result + ":" + childSessionId);
        }
    }

    private final Hooked failing = new Hooked("failing", true, "never seen");
    private final Hooked first = new Hooked("first", false, "facts to keep");
    private final Hooked second = new Hooked("second", false, "  ");
    private final Hooked third = new Hooked("third", false, "preferences to keep");

    private MemoryManager manager() {
        MemoryManager m = MemoryManager.builder().name("hooks").build();
        m.addProvider(failing);
        m.addProvider(first);
        m.addProvider(second);
        m.addProvider(third);
        return m;
    }

    /** {@code on_turn_start(turn_number, message)}: every provider, in order, before the recall. */
    @Test
    void onTurnStartReachesEveryProviderPastAFailingOne() {
        MemoryManager m = manager();
        m.onTurnStart(3, "hello");
        for (Hooked p : List.of(failing, first, second, third)) {
            assertThat(p.events()).contains("turnStart:3:hello");
        }
        assertThatThrownBy(() -> m.onTurnStart(0, "x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("turnNumber");
    }

    /**
     * {@code on_pre_compress(messages) -> str}: the providers' non-blank texts joined by a blank
     * line, for the compression summary; a failing provider contributes nothing.
     */
    @Test
    void onPreCompressJoinsTheProvidersTextsForTheSummary() {
        MemoryManager m = manager();
        String text = m.onPreCompress(List.of(Message.user("a"), Message.assistant("b")));
        assertThat(text).isEqualTo("facts to keep\n\npreferences to keep");
        assertThat(third.events()).contains("preCompress:2");
        assertThat(MemoryManager.create().onPreCompress(List.of())).isEmpty();
    }

    /** {@code on_memory_write(action, target, content)}: mirrored to every provider. */
    @Test
    void onMemoryWriteIsMirroredToEveryProvider() {
        MemoryManager m = manager();
        m.onMemoryWrite("add", "user", "prefers tea");
        for (Hooked p : List.of(failing, first, second, third)) {
            assertThat(p.events()).contains("memoryWrite:add:user:prefers tea");
        }
    }

    /** {@code on_delegation(task, result, child_session_id)}: every provider, on the parent's manager. */
    @Test
    void onDelegationReachesEveryProvider() {
        MemoryManager m = manager();
        m.onDelegation("find the invoice", "found it", "child-1");
        for (Hooked p : List.of(failing, first, second, third)) {
            assertThat(p.events()).contains("delegation:find the invoice:found it:child-1");
        }
    }

    /** {@code get_provider(name)}: the registered provider of that name, owned or used. */
    @Test
    void getProviderFindsARegisteredProviderByName() {
        MemoryManager m = manager();
        RecordingProvider shared = new RecordingProvider("shared");
        m.useProvider(shared);
        assertThat(m.getProvider("first")).containsSame(first);
        assertThat(m.getProvider("shared")).containsSame(shared);
        assertThat(m.getProvider("nobody")).isEmpty();
    }

    @Test
    void theHooksRefuseAfterShutdownAndNullsNamingTheParameter() {
        MemoryManager m = manager();
        assertThatThrownBy(() -> m.onMemoryWrite("add", null, "x")).hasMessage("target");
        assertThatThrownBy(() -> m.onDelegation("t", "r", null)).hasMessage("childSessionId");
        m.stop();
        assertThatThrownBy(() -> m.onTurnStart(1, "x")).isInstanceOf(StoppedException.class);
        assertThatThrownBy(() -> m.onPreCompress(List.of())).isInstanceOf(StoppedException.class);
    }
}
