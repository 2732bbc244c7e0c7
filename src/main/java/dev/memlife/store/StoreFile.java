package dev.memlife.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The SQLite file a store opened, and its identity at that moment: the file key (device and inode
 * on Unix), or its creation time where the file system has no key. A SQLite connection keeps
 * writing into the file it opened even after that file was deleted or replaced at its path, so
 * commits would succeed into a file nobody will ever read again. {@link #check()} compares the
 * file now at the path with the one opened (one {@code stat}) and fails once it differs; from then
 * on it fails every time, so the store never goes on in a fresh empty file either. Thread-safe.
 */
final class StoreFile {

    /** No file to watch: PostgreSQL, or an in-memory SQLite database. */
    static final StoreFile NONE = new StoreFile(null, null);

    /** The check failed: the store's file is gone. Not retried (see {@link Retry}). */
    static final class LostException extends SQLException {
        private static final long serialVersionUID = 1L;

        LostException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final Path path;
    private final Object identity;
    /** Why the file was lost, once it was; every later check throws this again. */
    private volatile String lost;

    private StoreFile(Path path, Object identity) {
        this.path = path;
        this.identity = identity;
    }

    /**
     * The file behind {@code connection}'s main database, with its identity now; {@link #NONE} for
     * an in-memory or temporary database.
     */
    static StoreFile of(Connection connection) throws SQLException {
        String file = null;
        try (Statement s = connection.createStatement();
                ResultSet rs = s.executeQuery("PRAGMA database_list")) {
            while (rs.next()) {
                if ("main".equals(rs.getString("name"))) {
                    file = rs.getString("file");
                }
            }
        }
        if (file == null || file.isEmpty()) {
            return NONE;
        }
        Path path = Path.of(file);
        try {
            return new StoreFile(path, identity(path));
        } catch (IOException e) {
            throw new SQLException("cannot read the attributes of the SQLite file " + path, e);
        }
    }

    /**
     * Throws unless the file at the path is still the one the store opened: it was deleted, or
     * replaced by another file (moved over it, or deleted and created anew). Once it found the file
     * lost, it always throws.
     *
     * @throws LostException naming the path and what happened to the file
     * @throws SQLException if the file's attributes cannot be read (not remembered: the next check
     *     tries again)
     */
    void check() throws SQLException {
        if (path == null) {
            return;
        }
        String why = lost;
        if (why == null) {
            Object now;
            try {
                now = identity(path);
            } catch (NoSuchFileException e) {
                now = null;
            } catch (IOException e) {
                throw new SQLException("cannot check the SQLite file " + path + ": " + e, e);
            }
            if (identity.equals(now)) {
                return;
            }
            why = "the SQLite file " + path + (now == null ? " was deleted"
                    : " was replaced by another file (file " + identity + " when opened, " + now + " now)")
                    + " while the store was running; nothing more is stored or read until the store is built again";
            lost = why;
        }
        throw new LostException(why, null);
    }

    private static Object identity(Path path) throws IOException {
        BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
        Object key = attributes.fileKey();
        return key != null ? key : attributes.creationTime();
    }

    @Override
    public String toString() {
        return path == null ? "no file" : path + " (" + identity + ")";
    }
}
