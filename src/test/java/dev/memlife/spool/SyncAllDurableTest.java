package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.Durability;
import dev.memlife.MemoryManager;
import dev.memlife.Turn;
import dev.memlife.testing.RecordingProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code syncAllDurable} tells its caller which of three things happened, so the caller knows
 * whether a retry is safe: rejected (nothing queued), accepted but not yet on disk (queued, must
 * not be retried), or durable. The force is held by a latch the test controls, so "not yet on
 * disk" is decided by the test, not by the disk's speed.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SyncAllDurableTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    /** Long enough to be sure the wait ends at the timeout; the held force decides the outcome. */
    private static final Duration SHORT = Duration.ofMillis(200);

    @TempDir
    Path tmp;

    @AfterEach
    void releaseTheForceHook() {
        SpoolSegments.beforeForce = null;
    }

    @Test
    void aWriteOnDiskIsDurable() {
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager memory = MemoryManager.builder().name("durable").spool(Spool.open(tmp.resolve("d"))).build();
        memory.addProvider(store);

        Durability result = memory.syncAllDurable("u1", "a1", "s", List.of(), WAIT);

        assertThat(result).isEqualTo(Durability.DURABLE);
        assertThat(result.accepted()).isTrue();
        assertThat(result.durable()).isTrue();
        assertThat(memory.stop().delivered()).isEqualTo(1);
        assertThat(store.turns()).extracting(Turn::userContent).containsExactly("u1");
    }

    @Test
    void aWriteWhoseForceIsHeldIsAcceptedButNotYetDurableAndStillDelivered() throws Exception {
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager memory = MemoryManager.builder().name("held").spool(Spool.open(tmp.resolve("h"))).build();
        memory.addProvider(store);
        CountDownLatch forceHeld = new CountDownLatch(1);
        CountDownLatch releaseForce = new CountDownLatch(1);
        SpoolSegments.beforeForce = () -> {
            forceHeld.countDown();
            try {
                releaseForce.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };

        Durability result = memory.syncAllDurable("u1", "a1", "s", List.of(), SHORT);

        assertThat(forceHeld.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the spool began a force").isTrue();
        assertThat(result).isEqualTo(Durability.NOT_YET_DURABLE);
        assertThat(result.accepted()).as("accepted: a retry would store the turn twice").isTrue();
        assertThat(result.durable()).isFalse();
        assertThat(store.awaitTurns(1, WAIT)).as("delivered all the same").isTrue();

        releaseForce.countDown();
        assertThat(memory.awaitDurable(WAIT)).as("durable once the force returns").isTrue();
        assertThat(memory.stop().delivered()).isEqualTo(1);
        assertThat(store.turns()).extracting(Turn::writeId).hasSize(1).doesNotHaveDuplicates();
    }

    @Test
    void aWriteTheManagerRefusesIsRejectedAndNothingIsQueued() {
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager memory = MemoryManager.builder().name("refused").spool(Spool.open(tmp.resolve("r"))).build();
        memory.addProvider(store);

        assertThat(memory.syncAllDurable(" ", "a", "s", List.of(), WAIT)).as("a blank turn").isEqualTo(Durability.REJECTED);
        memory.stop();
        Durability late = memory.syncAllDurable("u1", "a1", "s", List.of(), WAIT);

        assertThat(late).isEqualTo(Durability.REJECTED);
        assertThat(late.accepted()).as("a retry is safe").isFalse();
        assertThat(late.durable()).isFalse();
        assertThat(store.turns()).isEmpty();
    }
}
