package dev.memlife.cli;

import dev.memlife.MemoryProvider;
import dev.memlife.Turn;
import dev.memlife.store.JdbcMemoryProvider;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The store {@code spool replay} delivers into: a {@link JdbcMemoryProvider} whose write failures
 * are remembered, so the report can say why a write failed without a logging backend on the class
 * path. Only the hooks a replay calls are passed on: the writes and the shutdown.
 */
final class ReplayStore implements MemoryProvider {

    /** Distinct failure messages kept for the report. */
    static final int MAX_REASONS = 3;

    private final JdbcMemoryProvider store;
    private final Set<String> reasons = new LinkedHashSet<>();

    ReplayStore(JdbcMemoryProvider store) {
        this.store = store;
    }

    @Override
    public String name() {
        return store.name();
    }

    @Override
    public void syncTurn(Turn turn) {
        try {
            store.syncTurn(turn);
        } catch (RuntimeException e) {
            remember(e);
            throw e;
        }
    }

    @Override
    public void syncBatch(List<Turn> turns) {
        try {
            store.syncBatch(turns);
        } catch (RuntimeException e) {
            remember(e);
            throw e;
        }
    }

    @Override
    public void shutdown() {
        store.shutdown();
    }

    /** {@return writes the store skipped because it held their ids already} */
    long alreadyStored() {
        return store.figures().turnsSkipped();
    }

    /** {@return the first few distinct reasons the store gave for failing, oldest first} */
    synchronized List<String> reasons() {
        return new ArrayList<>(reasons);
    }

    private synchronized void remember(RuntimeException e) {
        if (reasons.size() < MAX_REASONS) {
            reasons.add(e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }
}
