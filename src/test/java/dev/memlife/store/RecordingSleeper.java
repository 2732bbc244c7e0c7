package dev.memlife.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** A sleeper that records every wait it is asked for and returns at once. Thread-safe. */
final class RecordingSleeper implements Sleeper {

    private final List<Duration> waits = new ArrayList<>();

    @Override
    public synchronized void sleep(Duration duration) {
        waits.add(duration);
    }

    synchronized List<Duration> waits() {
        return List.copyOf(waits);
    }
}
