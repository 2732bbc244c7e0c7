package dev.memlife.faults;

import dev.memlife.Turn;
import java.util.List;

/** The faulty provider of the matrix, taking writes one at a time ({@code syncTurn}). */
class FaultyProvider extends Probe {

    final FaultBehaviour behaviour;

    FaultyProvider(String name, FaultBehaviour behaviour) {
        super(name);
        this.behaviour = behaviour;
    }

    @Override
    void beforeWrite(List<Turn> turns) {
        behaviour.write(turns, false);
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
