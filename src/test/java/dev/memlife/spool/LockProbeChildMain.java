package dev.memlife.spool;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A child JVM of {@link SpoolDefectsTest}: tries the OS lock of a spool's lock file, as another
 * process (the command line's {@code spool replay}, say) would, and prints {@code HELD} if a
 * process holds it or {@code FREE} if it could take it (and releases it at once).
 *
 * <p>Usage: {@code LockProbeChildMain <lock file>}.
 */
public final class LockProbeChildMain {

    private LockProbeChildMain() {}

    public static void main(String[] args) throws IOException {
        ChildOutput.listenToTheTest();
        try (FileChannel channel = FileChannel.open(Path.of(args[0]), StandardOpenOption.WRITE);
                FileLock lock = channel.tryLock()) {
            ChildOutput.say(lock == null ? "HELD" : "FREE");
        }
        System.exit(0);
    }
}
