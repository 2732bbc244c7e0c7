package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.memlife.testing.FailingProvider;
import dev.memlife.testing.Hook;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/** Design section 2, contract 3: provider failures are logged at WARN, once per burst, not once per write. */
@Timeout(30)
class FailureLoggingTest {

    private final Logger logger = (Logger) LoggerFactory.getLogger(MemoryManager.class);
    private final ListAppender<ILoggingEvent> captured = new ListAppender<>();

    @BeforeEach
    void capture() {
        captured.start();
        logger.addAppender(captured);
    }

    @AfterEach
    void release() {
        logger.detachAppender(captured);
    }

    @Test
    void aBurstOfFailuresIsLoggedOnceAtWarnWithTheProviderAndTheCause() {
        MemoryManager m = MemoryManager.builder().name("noisy").build();
        m.addProvider(new FailingProvider("broken-store", Hook.SYNC_TURN));

        for (int i = 0; i < 1_000; i++) {
            m.syncAll("u", "a" + i, "s");
        }
        assertThat(m.flushPending(Duration.ofSeconds(10))).isTrue();
        DrainReport report = m.stop();

        assertThat(report.failed()).isEqualTo(1_000);
        assertThat(captured.list).filteredOn(e -> e.getFormattedMessage().contains("'broken-store'"))
                .singleElement()
                .satisfies(e -> {
                    assertThat(e.getLevel()).isEqualTo(Level.WARN);
                    assertThat(e.getFormattedMessage()).contains("'noisy'").contains("the next provider still gets it");
                    assertThat(e.getThrowableProxy().getMessage()).contains("fails in SYNC_TURN on purpose");
                });
    }

    @Test
    void aFailureBurstOfOneSharedStoreIsOneLineNotOnePerManager() {
        FailingProvider shared = new FailingProvider("shared-store", Hook.SYNC_TURN);
        List<String> failedIds = new ArrayList<>();
        for (int m = 0; m < 30; m++) {
            MemoryManager memory = MemoryManager.builder().name("agent-" + m).build();
            memory.useProvider(shared);
            memory.syncAll("u", "a", "s-" + m);
            DrainReport report = memory.stop();
            assertThat(report.failed()).isEqualTo(1);
            failedIds.addAll(report.failedWriteIds());
        }

        assertThat(failedIds).hasSize(30).doesNotHaveDuplicates();
        assertThat(captured.list).filteredOn(e -> e.getFormattedMessage().contains("'shared-store'"))
                .as("one line for the burst, whichever manager met it first").singleElement()
                .satisfies(e -> assertThat(e.getFormattedMessage()).contains("'agent-0'"));
    }

    @Test
    void aLateWriteIsLoggedAndCounted() {
        MemoryManager m = MemoryManager.builder().name("closed").build();
        m.stop();

        m.syncAll("late", "write", "session-9");
        m.syncAll("late", "write", "session-9");

        assertThat(m.rejectedWrites()).isEqualTo(2);
        assertThat(captured.list).filteredOn(e -> e.getFormattedMessage().contains("rejected"))
                .singleElement()
                .satisfies(e -> assertThat(e.getFormattedMessage()).contains("'closed'").contains("session-9"));
    }
}
