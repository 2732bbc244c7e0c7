package dev.memlife.bench;

import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Turn;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * Bytes the heap retains per queued write beyond its payload: a million writes queued behind a
 * held provider, all sharing the same payload strings (so the payload is not counted), measured as
 * the difference in used heap after full collections.
 */
final class QueuedWriteFootprint {

    private QueuedWriteFootprint() {}

    static double bytesPerQueuedWrite(int writes) throws InterruptedException {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch gate = new CountDownLatch(1);
        MemoryManager manager = MemoryManager.builder().name("footprint").queueCapacity(writes + 1).build();
        manager.addProvider(new MemoryProvider() {
            @Override
            public String name() {
                return "held";
            }

            @Override
            public void syncTurn(Turn turn) {
                held.countDown();
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        manager.syncAll(Contender.USER, Contender.ASSISTANT, Contender.SESSION);
        held.await();
        long before = Heap.usedAfterGc();
        for (int i = 0; i < writes; i++) {
            manager.syncAll(Contender.USER, Contender.ASSISTANT, Contender.SESSION);
        }
        long after = Heap.usedAfterGc();
        if (manager.pendingWrites() != writes + 1) {
            throw new IllegalStateException("expected " + (writes + 1) + " pending, was " + manager.pendingWrites());
        }
        gate.countDown();
        manager.stop(Duration.ZERO);
        return (after - before) / (double) writes;
    }
}
