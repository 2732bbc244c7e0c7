package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.memlife.testing.RecordingProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A provider a manager owns ({@code addProvider}) is shut down by it; one it only uses ({@code
 * useProvider}) is not, and an instance cannot have two owners: the sharing that shut a store down
 * under its other managers is refused, not documented.
 */
@Timeout(30)
class SharedProviderTest {

    @Test
    void aProviderUsedByManyManagersIsShutDownByNoneOfThem() {
        RecordingProvider shared = new RecordingProvider("shared");
        for (int m = 0; m < 3; m++) {
            MemoryManager memory = MemoryManager.builder().name("user-" + m).build();
            assertThat(memory.useProvider(shared)).isTrue();
            memory.syncAll("turn of " + m, "a", "s-" + m);

            DrainReport report = memory.stop();

            String id = shared.turns().get(m).writeId();
            assertThat(report.statusOf(id)).isEqualTo(WriteStatus.DELIVERED);
            assertThat(report.providersNotShutDown()).isEmpty();
            assertThat(report.providersShutDownLater()).isEmpty();
        }
        assertThat(shared.count("shutdown")).as("its lifecycle is the application's").isZero();
        assertThat(shared.turns()).extracting(Turn::userContent).containsExactly("turn of 0", "turn of 1", "turn of 2");
    }

    @Test
    void aSecondOwnerIsRefusedNamingBothManagersAndTheWayToShare() {
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager owner = MemoryManager.builder().name("owner").build();
        MemoryManager other = MemoryManager.builder().name("other").build();
        owner.addProvider(store);

        assertThatThrownBy(() -> other.addProvider(store)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("memory provider 'store' is already owned by manager 'owner', which will shut it down; "
                        + "manager 'other' can share it with useProvider(...), or take an instance of its own");
        assertThat(other.providerNames()).as("nothing was registered").isEmpty();
        assertThat(other.useProvider(store)).isTrue();

        other.stop();
        assertThat(store.count("shutdown")).as("a user does not shut it down").isZero();
        owner.stop();
        assertThat(store.count("shutdown")).as("its owner does, once").isEqualTo(1);
    }

    @Test
    void anOwnersClaimEndsWhenItHasShutTheProviderDown() {
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager first = MemoryManager.create();
        first.addProvider(store);
        first.stop();

        MemoryManager second = MemoryManager.create();
        assertThat(second.addProvider(store)).isTrue();
        second.stop();
        assertThat(store.count("shutdown")).isEqualTo(2);
    }
}
