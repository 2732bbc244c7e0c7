package dev.memlife.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import net.jqwik.api.lifecycle.AfterContainer;

/** The hostile-input properties on SQLite: each try in a file of its own, deleted after it. */
class SqliteHostileInputPropertyTest extends HostileInputProperties {

    private static final Path DIR = createDir();

    @Override
    JdbcMemoryProvider.Builder builder(String prefix) {
        return JdbcMemoryProvider.builder("jdbc:sqlite:" + DIR.resolve(prefix + ".db")).tablePrefix(prefix);
    }

    @Override
    void dropTables(String prefix) throws IOException {
        for (String suffix : new String[] {".db", ".db-wal", ".db-shm"}) {
            Files.deleteIfExists(DIR.resolve(prefix + suffix));
        }
    }

    @AfterContainer
    static void deleteDir() throws IOException {
        try (Stream<Path> files = Files.walk(DIR)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    private static Path createDir() {
        try {
            return Files.createTempDirectory("memlife-hostile-");
        } catch (IOException e) {
            throw new IllegalStateException("cannot create a temporary directory", e);
        }
    }
}
