package dev.memlife.testing;

import dev.memlife.Message;
import dev.memlife.Turn;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A recording provider that throws from the hooks a test chooses, to prove that a failing
 * provider is isolated: logged, counted, and never in the way of the next provider or the writer.
 * Each failing call is recorded as {@code "fail:<hook>"} before it throws; calls that do not fail
 * are recorded as usual. Thread-safe.
 */
public class FailingProvider extends RecordingProvider {

    private final Set<Hook> hooks;
    private final Predicate<Turn> failingWrites;
    private final Function<Hook, ? extends Throwable> failure;

    /**
     * Fails every call of the given hooks with an {@link IllegalStateException}.
     *
     * @param name the provider's name
     * @param hooks the hooks that fail; none: a provider that only records
     */
    public FailingProvider(String name, Hook... hooks) {
        this(name, Set.of(hooks), turn -> true,
                hook -> new IllegalStateException(name + " fails in " + hook + " on purpose"));
    }

    /**
     * Fails the chosen hooks with the throwable {@code failure} makes (an unchecked exception or an
     * {@link Error}); for {@link Hook#SYNC_TURN}, only the writes {@code failingWrites} selects.
     *
     * @param name the provider's name
     * @param hooks the hooks that fail; copied
     * @param failingWrites which writes fail, if {@code hooks} holds {@link Hook#SYNC_TURN}
     * @param failure makes the throwable for a failing call of a hook; a checked exception is
     *     thrown wrapped in an {@link IllegalStateException}
     */
    public FailingProvider(String name, Set<Hook> hooks, Predicate<Turn> failingWrites,
            Function<Hook, ? extends Throwable> failure) {
        super(name);
        this.hooks = hooks.isEmpty() ? EnumSet.noneOf(Hook.class) : EnumSet.copyOf(hooks);
        this.failingWrites = failingWrites;
        this.failure = failure;
    }

    /**
     * A provider that fails only the writes {@code failingWrites} selects, with an {@link
     * IllegalStateException}; every other call is recorded as usual.
     *
     * @param name the provider's name
     * @param failingWrites which writes fail
     * @return the provider
     */
    public static FailingProvider failingWrites(String name, Predicate<Turn> failingWrites) {
        return new FailingProvider(name, Set.of(Hook.SYNC_TURN), failingWrites,
                hook -> new IllegalStateException(name + " fails this write on purpose"));
    }

    private void maybeFail(Hook hook) {
        if (hooks.contains(hook)) {
            record("fail:" + hook);
            Throwable t = failure.apply(hook);
            if (t instanceof RuntimeException) {
                throw (RuntimeException) t;
            }
            if (t instanceof Error) {
                throw (Error) t;
            }
            throw new IllegalStateException(t);
        }
    }

    @Override
    public void initialize(String sessionId) {
        maybeFail(Hook.INITIALIZE);
        super.initialize(sessionId);
    }

    @Override
    public String systemPromptBlock() {
        maybeFail(Hook.SYSTEM_PROMPT);
        return super.systemPromptBlock();
    }

    @Override
    public String prefetch(String query, String sessionId) {
        maybeFail(Hook.PREFETCH);
        return super.prefetch(query, sessionId);
    }

    @Override
    public String handleToolCall(String tool, Map<String, Object> args) {
        maybeFail(Hook.TOOL_CALL);
        return super.handleToolCall(tool, args);
    }

    @Override
    public void syncTurn(Turn turn) {
        if (failingWrites.test(turn)) {
            maybeFail(Hook.SYNC_TURN);
        }
        super.syncTurn(turn);
    }

    @Override
    public void onSessionEnd(List<Message> messages) {
        maybeFail(Hook.ON_SESSION_END);
        super.onSessionEnd(messages);
    }

    @Override
    public void shutdown() {
        maybeFail(Hook.SHUTDOWN);
        super.shutdown();
    }
}
