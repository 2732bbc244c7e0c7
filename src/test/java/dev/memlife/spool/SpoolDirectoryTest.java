package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.memlife.MemoryManager;
import dev.memlife.Turn;
import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.RecordingProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link SpoolDirectory}: one spool per agent, removed when drained; a crash's leftovers recovered. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpoolDirectoryTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path tmp;

    @Test
    void eachAgentGetsAFreshSpoolThatIsRemovedOnceItsWritesAreDelivered() throws Exception {
        SpoolDirectory spools = SpoolDirectory.open(tmp.resolve("spools"));
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager oldAgent = MemoryManager.builder().spool(spools.newSpool("session/1")).build();
        MemoryManager newAgent = MemoryManager.builder().spool(spools.newSpool("session/1")).build();
        oldAgent.useProvider(store);
        newAgent.useProvider(store);
        assertThat(subdirectories(spools.root())).hasSize(2).allSatisfy(d ->
                assertThat(d.getFileName().toString()).startsWith("session_1."));
        oldAgent.syncAll("old", "a", "session/1");
        newAgent.syncAll("new", "a", "session/1");
        oldAgent.stop();
        newAgent.stop();
        assertThat(store.turns()).extracting(Turn::userContent).containsExactlyInAnyOrder("old", "new");
        assertThat(subdirectories(spools.root())).as("drained spools are removed").isEmpty();
    }

    @Test
    void recoverReplaysWhatACrashLeftInEachSpoolAndSkipsSpoolsInUse() throws Exception {
        SpoolDirectory live = SpoolDirectory.open(tmp.resolve("live"));
        GatedProvider held = new GatedProvider("store", t -> true);
        MemoryManager a = MemoryManager.builder().name("a").spool(live.newSpool("a")).build();
        MemoryManager b = MemoryManager.builder().name("b").spool(live.newSpool("b")).build();
        a.useProvider(held);
        b.useProvider(held);
        for (int i = 0; i < 5; i++) {
            a.syncAll("a" + i, "x", "a");
            b.syncAll("b" + i, "x", "b");
        }
        assertThat(a.awaitDurable(WAIT)).isTrue();
        assertThat(b.awaitDurable(WAIT)).isTrue();
        Path after = tmp.resolve("after-crash");
        Files.createDirectories(after);
        for (Path d : subdirectories(live.root())) {
            SpoolTest.crashImage(d, after.resolve(d.getFileName()));
        }
        SpoolDirectory restarted = SpoolDirectory.open(after);
        MemoryManager running = MemoryManager.builder().name("running").spool(restarted.newSpool("c")).build();

        RecordingProvider store = new RecordingProvider("store");
        SpoolDirectory.Recovery recovery = restarted.recover(WAIT, store);
        assertThat(recovery.replayed()).isEqualTo(10);
        assertThat(recovery.delivered()).isEqualTo(10);
        assertThat(recovery.notDelivered()).isZero();
        List<String> users = store.turns().stream().map(Turn::userContent).collect(Collectors.toList());
        assertThat(users.stream().filter(u -> u.startsWith("a"))).containsExactly("a0", "a1", "a2", "a3", "a4");
        assertThat(users.stream().filter(u -> u.startsWith("b"))).containsExactly("b0", "b1", "b2", "b3", "b4");
        assertThat(subdirectories(after)).as("only the spool in use is left").singleElement()
                .satisfies(d -> assertThat(d.getFileName().toString()).startsWith("c."));
        assertThat(store.count("shutdown")).as("recover uses the providers, it does not own them").isZero();
        assertThatThrownBy(() -> restarted.recover(WAIT)).isInstanceOf(IllegalArgumentException.class);

        running.stop();
        held.open();
        a.stop();
        b.stop();
    }

    private static List<Path> subdirectories(Path root) throws IOException {
        try (Stream<Path> s = Files.list(root)) {
            return s.filter(Files::isDirectory).sorted().toList();
        }
    }
}
