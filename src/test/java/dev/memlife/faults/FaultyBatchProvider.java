package dev.memlife.faults;

import dev.memlife.Turn;
import java.util.List;

/** The faulty provider of the matrix taking writes as batches ({@code syncBatch}), for {@link Fault#KEEPS_BATCH}. */
class FaultyBatchProvider extends BatchProbe {

    final FaultBehaviour behaviour;

    FaultyBatchProvider(String name, FaultBehaviour behaviour) {
        super(name);
        this.behaviour = behaviour;
    }

    @Override
    void beforeWrite(List<Turn> turns) {
        behaviour.write(turns, true);
    }

    @Override
    void beforeExtraction() {
        behaviour.extraction();
    }

    @Override
    void beforeShutdown() {
        behaviour.shutdown();
    }
}
