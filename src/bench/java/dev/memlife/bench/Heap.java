package dev.memlife.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;

/** Heap measurement after garbage collection, for the retained-bytes figures. */
final class Heap {

    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

    private Heap() {}

    /** Used heap after several full collections, so only reachable objects are counted. */
    static long usedAfterGc() {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            try {
                Thread.sleep(50); // sleep-ok: lets the collector and finalization settle between runs
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            used = Math.min(used, MEMORY.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
