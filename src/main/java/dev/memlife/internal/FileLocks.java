package dev.memlife.internal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;

/** The lock of a directory's lock file, the same answer whether another process or this JVM holds it. */
public final class FileLocks {

    private FileLocks() {}

    /**
     * Tries to lock the whole file behind {@code channel}, without waiting.
     *
     * @param channel a channel open for writing on the lock file
     * @return the lock; null if another process, or this JVM through another channel, holds it
     * @throws IOException if the file system refused the attempt
     */
    public static FileLock tryLock(FileChannel channel) throws IOException {
        try {
            return channel.tryLock();
        } catch (OverlappingFileLockException e) {
            return null; // held in this JVM
        }
    }
}
