package dev.memlife.faults;

import dev.memlife.Turn;
import java.util.List;

/**
 * A {@link Probe} that overrides {@code syncBatch}, so the manager hands it runs of writes as one
 * list when every provider of the route does the same.
 */
class BatchProbe extends Probe {

    BatchProbe(String name) {
        super(name);
    }

    @Override
    public void syncBatch(List<Turn> turns) {
        syncBatchProbed(turns);
    }
}
