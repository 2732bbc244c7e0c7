package dev.memlife.store;

import dev.memlife.Turn;
import dev.memlife.testing.GatedProvider;
import java.util.ArrayList;
import java.util.List;

/**
 * A gated provider that writes batches, so the manager hands batches to every provider of the
 * route: registered before the store, it holds the writer on its first write until the test opens
 * the gate, letting writes pile up in the queue, and it records the size of every batch. Thread-safe.
 */
final class BatchGate extends GatedProvider {

    private final List<Integer> batchSizes = new ArrayList<>();

    BatchGate() {
        super("gate");
    }

    @Override
    public void syncBatch(List<Turn> turns) {
        synchronized (batchSizes) {
            batchSizes.add(turns.size());
        }
        super.syncBatch(turns);
    }

    List<Integer> batchSizes() {
        synchronized (batchSizes) {
            return List.copyOf(batchSizes);
        }
    }
}
