package dev.memlife.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The one backoff rule: the first wait, doubled after each further failure, never past the longest. */
@Timeout(30)
class AttemptsTest {

    @Test
    void theWaitDoublesAfterEachFailureUpToTheLongest() {
        Attempts rule = Attempts.backoff(Duration.ofMillis(50), Duration.ofMillis(400));
        List<Long> waits = new ArrayList<>();
        for (int failed = 1; failed <= 6; failed++) {
            waits.add(rule.waitAfter(failed).toMillis());
        }
        assertThat(waits).containsExactly(50L, 100L, 200L, 400L, 400L, 400L);
        assertThat(rule.waitAfter(Integer.MAX_VALUE)).isEqualTo(Duration.ofMillis(400));
    }

    @Test
    void aLongestWaitShorterThanTheFirstWins() {
        assertThat(Attempts.backoff(Duration.ofMillis(50), Duration.ofMillis(20)).waitAfter(1))
                .isEqualTo(Duration.ofMillis(20));
    }

    @Test
    void runTriesAtMostItsAttemptsAndKeepsEveryFailure() {
        AtomicInteger calls = new AtomicInteger();
        Attempts three = new Attempts(3, Duration.ZERO, Duration.ZERO);
        assertThatThrownBy(() -> three.run(() -> {
            throw new IllegalStateException("call " + calls.incrementAndGet());
        })).hasMessage("call 1").satisfies(e -> assertThat(e.getSuppressed()).hasSize(2));
        assertThat(calls).hasValue(3);
        assertThatThrownBy(() -> new Attempts(0, Duration.ZERO, Duration.ZERO)).hasMessageContaining("attempts");
    }
}
