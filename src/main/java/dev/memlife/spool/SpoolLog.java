package dev.memlife.spool;

import static dev.memlife.spool.SpoolFiles.LOCK_FILE;
import static dev.memlife.spool.SpoolFiles.OFFSET_MASK;
import static dev.memlife.spool.SpoolFiles.failedPath;
import static dev.memlife.spool.SpoolFiles.segmentPath;
import static java.util.Objects.requireNonNull;

import dev.memlife.SpoolFigures;
import dev.memlife.Turn;
import dev.memlife.internal.Events;
import dev.memlife.internal.WriteAheadLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The spool's side of the write-ahead log protocol: what a {@link Spool} does for the manager it
 * was given to. The manager calls it through {@link WriteAheadLog}; applications never see it.
 * The spool's contract (what survives what, on disk, after a crash) is in {@link Spool}.
 *
 * <h2>Its parts</h2>
 *
 * {@link SpoolScan} is what the open finds; {@link SpoolAppender} stores the appends into the
 * mapped segment under the order lock; {@link CommitterThread} runs the commits, on demand; {@link
 * SpoolSegments} forces what the appends stored, seals the segments they finished, records the
 * delivery mark and deletes what it passed; {@link SpoolRecord} and {@link SegmentFormat} are the
 * bytes. This class ties them to the manager: appends, durability waits, failed writes kept,
 * replay, figures. One idea at about 700 lines: the protocol's twelve calls share its two locks and
 * the positions they guard (appended, forced, delivered), and splitting them apart would spread
 * one invariant over several classes.
 *
 * <p>Thread-safe. Closed by the manager's shutdown.
 */
final class SpoolLog implements WriteAheadLog, CommitterThread.Work {

    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);
    /** The longest a durability waiter parks before it looks again on its own: a bound, not a poll. */
    private static final long MAX_DURABLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /**
     * The page the committer's forces are counted in. A force cleans the pages it covers, and the
     * next store into a clean page faults, waiting on the file system; so the committer forces the
     * page the appends are filling only when a caller waits for it, or once the appends paused.
     */
    static final int PAGE = 4096;
    /** How long the appends must pause before the committer forces the page they were filling. */
    static final long TAIL_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final Path dir;
    private final long maxBytes;
    private final long segmentBytes;
    private final boolean removeWhenEmpty;
    private final FileChannel lockChannel;
    private final FileLock fileLock;
    /** This spool's entry in {@link Spool.Builder#HELD}: its directory's real path. */
    private final Path heldAs;

    /** Orders appends with the manager's queue; also cut by the committer to take the buffer. */
    private final ReentrantLock order = new ReentrantLock();
    /** Stores the appends into the segment being written; under {@link #order}. */
    private final SpoolAppender appends;
    /** Commits whenever writes wait; started on demand, gone when idle. */
    private final CommitterThread committer;
    /** One group commit at a time; guards the files, the segments and the mark's last written value. */
    private final ReentrantLock commitLock = new ReentrantLock();
    /** Callers of {@link #awaitDurable} parked until the commit under way ends; woken by {@link #unlockCommit}. */
    private final Queue<Thread> durableWaiters = new ConcurrentLinkedQueue<>();

    // ---- under commitLock ----
    /** The segment files and the delivery mark. */
    private final SpoolSegments segments;
    private long groupCommits;
    /** Writes, bytes and segments taken since the last commit that forced: its event reports them. */
    private long takenWrites;
    private long takenBytes;
    private int takenSegments;

    // ---- any thread ----
    private volatile String managerName;
    private volatile byte[] header;
    private volatile long durablePosition;
    /** The furthest position a caller of {@link #awaitDurable} waits for: it is forced whole. */
    private final AtomicLong durableWanted = new AtomicLong();
    /** The appends' position when the committer last saw it move, and when: the tail's pause. */
    private volatile long tailSeen;
    private volatile long tailSeenAt;
    private volatile IOException failure;
    private volatile boolean closed;
    /**
     * With the bytes appended this run ({@link SpoolAppender#appendedBytes}), the bytes on disk and in
     * the buffer, which the size bound counts: the segments of earlier runs, this run's first
     * header and kept failed writes, less what was deleted. Appends count under the order lock
     * instead, without an atomic per write.
     */
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong replayed = new AtomicLong();
    private final AtomicLong corrupt = new AtomicLong();
    private final AtomicLong rejectedFull = new AtomicLong();
    private final AtomicLong failedKept = new AtomicLong();
    /** Guards {@link #failedFile}: this run's file of writes a provider failed, made at the first. */
    private final Object failedLock = new Object();
    private SegmentFile failedFile;
    /** Where the failed writes earlier runs kept went in this run's segment, in their order. */
    private final List<Long> carried = new ArrayList<>();
    /** What the open found: the mark, the segments with writes to replay, the failed writes kept. */
    private final SpoolScan found;
    private boolean replayDone;
    /** What the writer finished: updated after every write, so kept apart from the fields above. */
    private final DeliveredSoFar delivered;

    SpoolLog(Path dir, long maxBytes, long segmentBytes, boolean removeWhenEmpty, Path heldAs,
            FileChannel lockChannel, FileLock fileLock) throws IOException {
        this.dir = dir;
        this.heldAs = heldAs;
        this.maxBytes = maxBytes;
        this.segmentBytes = segmentBytes;
        this.removeWhenEmpty = removeWhenEmpty;
        this.lockChannel = lockChannel;
        this.fileLock = fileLock;
        this.committer = new CommitterThread(dir, this);
        this.appends = new SpoolAppender(dir, segmentBytes, committer::wake);
        DeliveryMark mark = new DeliveryMark(dir);
        this.found = SpoolScan.of(dir, mark.read());
        this.segments = new SpoolSegments(dir, mark, found, bytes);
        this.delivered = new DeliveredSoFar(found.mark);
        this.corrupt.set(found.corrupt);
    }

    static {
        // The commit's flight-recorder event is initialised once, when the first spool opens, not
        // in the first group commit: a fresh JVM's first event class registers with the recorder
        // (some 400 ms under a recording), and the first commit should wait for the disk only.
        Events.SpoolCommit event = new Events.SpoolCommit();
        event.begin();
        event.end();
        event.shouldCommit();
    }

    // ---- the manager's side ---------------------------------------------------------------------

    @Override
    public void attach(String managerName, String idPrefix, ThreadFactory threads) {
        requireNonNull(managerName, "managerName");
        requireNonNull(idPrefix, "idPrefix");
        requireNonNull(threads, "threads");
        commitLock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("spool " + dir + " is closed: open it again for another manager");
            }
            if (this.managerName != null) {
                throw new IllegalStateException("spool " + dir + " already serves memory manager '" + this.managerName
                        + "'; a spool serves one manager: open another directory for manager '" + managerName + "'");
            }
            byte[] head = SegmentFormat.header(idPrefix);
            order.lock();
            try {
                appends.start(found.nextSegment, head);
                durablePosition = appends.appendedPosition();
            } finally {
                order.unlock();
            }
            segments.start(found.nextSegment, head.length);
            this.header = head;
            this.managerName = managerName;
            committer.use(threads);
            carryFailedEarlier();
        } catch (IOException e) {
            throw new UncheckedIOException("could not create a segment in spool " + dir, e);
        } finally {
            unlockCommit();
        }
    }

    /**
     * Under the commit lock, at attach: appends the failed writes earlier runs kept to this run's
     * segment (with their ids and times), forces them, and only then deletes their files; the
     * replay hands them over after the earlier segments. A crash in between carries them twice,
     * which the idempotent store keeps once.
     */
    private void carryFailedEarlier() throws IOException {
        if (found.failedFiles.isEmpty()) {
            return;
        }
        order.lock();
        try {
            for (Turn t : found.failedEarlier) {
                byte[] record = SpoolRecord.encodeKept(t);
                appends.prepare(record.length);
                carried.add(appends.append(record, false, 0));
            }
        } finally {
            order.unlock();
        }
        commitLocked(false, true);
        if (failure != null) {
            throw failure;
        }
        for (Path file : found.failedFiles) {
            Files.deleteIfExists(file);
        }
        SegmentFile.forceDirectory(dir);
        LOG.info("spool {}: {} writes a provider failed in an earlier run are queued again", dir,
                found.failedEarlier.size());
    }

    @Override
    public Lock orderLock() {
        return order;
    }

    /**
     * {@inheritDoc}
     *
     * @throws RejectedExecutionException if the write is larger than a spool record holds
     */
    @Override
    public byte[] encode(Turn turn) {
        try {
            return SpoolRecord.encode(turn);
        } catch (IllegalArgumentException e) {
            throw new RejectedExecutionException(e.getMessage() + "; the write was not accepted and is counted as "
                    + "rejected", e);
        }
    }

    @Override
    public void checkRoom(byte[] encoded) {
        int length = SpoolRecord.length(encoded);
        IOException failed = failure;
        if (failed != null) {
            throw new RejectedExecutionException("the spool of memory manager '" + managerName + "' in " + dir
                    + " failed (" + failed + "); the write was not accepted and is counted as rejected", failed);
        }
        long held = heldLocked();
        long need = (long) length + header.length; // a new segment may be needed
        if (held + need > maxBytes) {
            if (length + header.length <= maxBytes && delivered.position() >= appends.appendedPosition()) {
                // Every write held was delivered: none of these bytes is needed. The write starts a
                // new segment, so the committer seals the one being written and deletes it with the
                // rest; a bound smaller than a segment never fills for good.
                appends.rollBeforeNext();
            } else {
                rejectedFull.incrementAndGet();
                throw new SpoolFullException(dir, held, maxBytes, length, managerName);
            }
        }
        try {
            appends.prepare(length);
        } catch (IOException e) {
            throw new RejectedExecutionException("the spool of memory manager '" + managerName + "' in " + dir
                    + " could not make room for the write (" + e.getMessage() + "); the write was not accepted and "
                    + "is counted as rejected", e);
        } catch (IllegalStateException e) {
            throw new RejectedExecutionException("the spool of memory manager '" + managerName + "' in " + dir
                    + " is closed; the write was not accepted and is counted as rejected", e);
        }
    }

    /** {@return the bytes the size bound counts now} */
    private long heldBytes() {
        order.lock();
        try {
            return heldLocked();
        } finally {
            order.unlock();
        }
    }

    /** {@return the bytes the size bound counts: this run's appends and the rest; under the order lock} */
    private long heldLocked() {
        return appends.appendedBytes() + bytes.get();
    }

    /**
     * {@inheritDoc}
     *
     * <p>A store the kernel refuses (SIGBUS: a disk with no block left for the page, or a segment
     * file cut under the spool) fails the spool when the JDK reports it inside the store: it is
     * logged, and later writes are refused; this write is still queued and delivered, but is not
     * in the spool. Java 17 may report it a little later, as an {@code InternalError} thrown in
     * the caller's thread after this returned; {@link MappedSegment} maps a window only with room
     * to spare on the disk so that neither happens.
     */
    @Override
    public long append(byte[] encoded, long seq) {
        try {
            return appends.append(encoded, true, seq);
        } catch (InternalError e) { // the JDK's report of a SIGBUS in a store into a mapping
            IOException refused = new IOException("a record could not be stored into the segment being written ("
                    + e.getMessage() + "): the disk may be full, or the file was cut", e);
            failure = refused;
            LOG.error("spool {} of memory manager '{}' failed: the write numbered {} is queued and delivered, but "
                    + "not in the spool; later writes are refused", dir, managerName, seq, refused);
            return appends.appendedPosition();
        }
    }

    /**
     * Keeps a write a provider failed in this run's file of failed writes ({@code <n>.failed}),
     * forced before the writer marks the write delivered, so the mark may pass it in the segment.
     * The next open carries the kept writes into its own segment, ahead of its new writes, and
     * deletes the file: the next start retries them.
     */
    @Override
    public void keepFailed(Turn turn) {
        byte[] record = SpoolRecord.encodeKept(turn);
        synchronized (failedLock) {
            try {
                if (closed || failedFile == null && heldBytes() + record.length > maxBytes) {
                    throw new IOException(closed ? "the spool is closed" : "the spool is full");
                }
                if (failedFile == null) {
                    failedFile = SegmentFile.create(failedPath(dir, found.nextSegment), SegmentFormat.header(""));
                }
                failedFile.write(record, 0, record.length);
                failedFile.force();
                bytes.addAndGet(record.length);
                failedKept.incrementAndGet();
            } catch (IOException e) {
                LOG.error("spool {}: write {} failed at a provider and could not be kept for the next start ({}); it "
                        + "is in the drain report's failed ids", dir, turn.writeId(), e.toString());
            }
        }
    }

    @Override
    public long appended() {
        return appends.appendedPosition();
    }

    @Override
    public boolean awaitDurable(long position, long timeoutNanos) {
        if (durablePosition >= position) {
            return true;
        }
        long deadline = System.nanoTime() + Math.max(0, Math.min(timeoutNanos, Long.MAX_VALUE / 2));
        Thread me = Thread.currentThread();
        while (durablePosition < position) {
            checkHealthy();
            if (me.isInterrupted()) {
                return false; // the flag stays set
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return durablePosition >= position;
            }
            durableWanted.accumulateAndGet(position, Math::max); // the page it ends in is forced too
            Thread c = committer.current();
            if (c != null) {
                LockSupport.unpark(c); // it is woken by the append already; this makes sure
            } else if (!wakeCommitterOrLead(position)) {
                continue; // no committer thread could be had: this caller committed itself
            }
            // The committer forces; every waiter is woken at the end of each commit at once, and
            // looks again. Only the committer thread does the file's I/O: an interrupt of a caller
            // in the middle of a force would close the channel (ClosedByInterruptException) and
            // fail the spool for good.
            durableWaiters.add(me);
            try {
                if (durablePosition < position) {
                    LockSupport.parkNanos(this, Math.min(left, MAX_DURABLE_PARK_NANOS));
                }
            } finally {
                durableWaiters.remove(me);
            }
        }
        return true;
    }

    /**
     * Starts a committer for a waiter that found none (it retired after its keep-alive); if none
     * can be started, the waiter commits on its own thread.
     *
     * @return true if a committer runs now; false if this caller committed instead
     */
    private boolean wakeCommitterOrLead(long position) {
        committer.wake();
        if (committer.current() != null) {
            return true;
        }
        commitLock.lock();
        try {
            if (durablePosition < position) {
                commitLocked(false, true);
            }
        } finally {
            unlockCommit();
        }
        return false;
    }

    /**
     * Releases the commit lock, then wakes the callers of {@link #awaitDurable} that wait for a
     * commit to end. A waiter registers before it checks that the lock is held, and this wakes
     * after the release, so a waiter that parks is woken by the release it saw coming.
     */
    private void unlockCommit() {
        commitLock.unlock();
        for (Thread t : durableWaiters) {
            LockSupport.unpark(t);
        }
    }

    private void checkHealthy() {
        IOException failed = failure;
        if (failed != null) {
            throw new UncheckedIOException("spool " + dir + " failed; nothing appended after its last good force is "
                    + "durable", failed);
        }
        if (closed && durablePosition < appends.appendedPosition()) {
            throw new IllegalStateException("spool " + dir + " is closed");
        }
    }

    @Override
    public void delivered(long position, int writes) {
        if (delivered.add(position, writes)) {
            committer.wake();
        }
    }

    // ---- the committer --------------------------------------------------------------------------

    @Override
    public boolean closed() {
        return closed;
    }

    /**
     * One pass of the committer thread: a group commit if writes wait for one, then the delivery
     * mark written and delivered segments deleted if the writer marked progress.
     */
    @Override
    public void commitOnce() {
        delivered.passBegins();
        commitLock.lock();
        try {
            if (!closed) {
                commitLocked(false, false);
            }
        } finally {
            unlockCommit();
        }
    }

    /**
     * When a pass is due: now (0) if the appends filled pages not yet forced, a caller waits for a
     * force, the appends paused for {@link #TAIL_DELAY_NANOS} with their last page unforced, or the
     * writer finished writes the mark has not recorded; later (the nanoseconds until the pause is
     * long enough) if only the page being filled is unforced; never ({@code Long.MAX_VALUE}) if
     * nothing waits. The writer asks for a pass when it has not since the last began; the position
     * is checked too, because it is published without a fence and a pass may begin just before
     * the writer's last update shows (a mark that cannot be written is not tried again until the
     * writer moves on).
     */
    @Override
    public long nanosUntilWork() {
        if (delivered.wakeAsked() || delivered.position() > segments.markTried()) {
            return 0;
        }
        long appended = appends.appendedPosition();
        long durable = durablePosition;
        if (appended <= durable || failure != null) {
            return Long.MAX_VALUE;
        }
        if (pageStart(appended) > durable || durableWanted.get() > durable) {
            return 0;
        }
        long now = System.nanoTime();
        if (appended != tailSeen) {
            tailSeen = appended;
            tailSeenAt = now;
            return TAIL_DELAY_NANOS;
        }
        return Math.max(0, tailSeenAt + TAIL_DELAY_NANOS - now);
    }

    /** {@return the start of the page holding the byte at {@code position}: how far the pages before it reach} */
    private static long pageStart(long position) {
        return position - SpoolFiles.offset(position) % PAGE;
    }

    /**
     * Under the commit lock: takes what the appends left (at close, ending them first) and forces
     * it (the page they are filling only if {@code whole}, a caller waits for it or they paused),
     * unmapping the windows they moved past and sealing the segments they finished, then writes
     * the delivery mark and deletes the segments every write of which was delivered. A disk
     * failure is kept: later appends are refused, waiters get it; at close the windows are still
     * unmapped and the segments sealed. A commit that forces something is recorded as one {@link
     * Events.SpoolCommit}.
     */
    private void commitLocked(boolean closing, boolean whole) {
        // Read before the appends are taken: a failed write kept again is appended before the writer
        // marks it delivered, so a mark read now never passes a kept write this commit misses.
        long deliveredUpTo = delivered.position();
        if (failure == null || closing) {
            SpoolAppender.Taken taken;
            order.lock();
            try {
                if (closing) {
                    appends.close(); // later appends are refused: the windows are unmapped below
                }
                taken = appends.take();
            } finally {
                order.unlock();
            }
            if (failure != null) {
                release(taken);
            } else if (taken.bytes() > 0 || !taken.retired().isEmpty() || taken.position() > durablePosition) {
                // The page being filled is forced only if a caller waits for it, the appends paused
                // (or they end): a force cleans it, and the next store into it would fault.
                boolean all = whole || durableWanted.get() > durablePosition
                        || taken.position() == tailSeen && System.nanoTime() - tailSeenAt >= TAIL_DELAY_NANOS;
                long upTo = all ? taken.position() : pageStart(taken.position());
                long before = durablePosition;
                takenWrites += taken.writes();
                takenBytes += taken.bytes();
                takenSegments += taken.segmentsStarted();
                Events.SpoolCommit event = new Events.SpoolCommit();
                event.begin();
                try {
                    durablePosition = Math.max(durablePosition, segments.force(taken, upTo, true));
                } catch (IOException e) {
                    failure = e;
                    LOG.error("spool {} of memory manager '{}' failed to force; it refuses new writes, and the writes "
                            + "not yet forced are delivered and survive a crash of the process, but not power loss",
                            dir, managerName, e);
                }
                event.end();
                boolean forcedWrites = durablePosition > before && takenWrites > 0; // not a seal alone
                if (forcedWrites || failure != null) {
                    if (forcedWrites) {
                        groupCommits++;
                    }
                    if (event.shouldCommit()) {
                        event.manager = managerName;
                        event.directory = dir.toString();
                        event.writes = takenWrites;
                        event.bytes = takenBytes;
                        event.segmentsStarted = takenSegments;
                        event.closing = closing;
                        event.failed = failure != null;
                        event.commit();
                    }
                    takenWrites = 0;
                    takenBytes = 0;
                    takenSegments = 0;
                }
            }
        }
        segments.markAndClean(deliveredUpTo, closing);
    }

    /** Unmaps and seals what a failed spool's appends left, unforced. */
    private void release(SpoolAppender.Taken taken) {
        try {
            segments.force(taken, taken.position(), false);
        } catch (IOException e) {
            throw new AssertionError("nothing is forced", e);
        }
    }

    // ---- replay ---------------------------------------------------------------------------------

    @Override
    public long replay(Replayer into) {
        requireNonNull(into, "into");
        synchronized (found) {
            if (replayDone) {
                return 0;
            }
            replayDone = true;
        }
        SegmentReplay fromSegments = new SegmentReplay(dir, found.mark, into, replayed, corrupt);
        for (long number : found.segments.keySet()) {
            if (!fromSegments.replay(number)) {
                return fromSegments.replayed(); // the manager is shutting down: the rest stays for the next start
            }
        }
        long n = fromSegments.replayed();
        for (int i = 0; i < carried.size(); i++) { // failed writes of earlier runs, after the earlier segments
            if (!into.accept(found.failedEarlier.get(i), carried.get(i))) {
                return n;
            }
            n++;
            replayed.incrementAndGet();
        }
        return n;
    }

    // ---- figures and close ----------------------------------------------------------------------

    @Override
    public SpoolFigures figures() {
        long appended;
        long held;
        order.lock();
        try {
            appended = appends.appendedCount();
            held = heldLocked();
        } finally {
            order.unlock();
        }
        long backlog = Math.max(0, found.pending + appended - delivered.count());
        return new SpoolFigures(appended, replayed.get(), backlog, Duration.ZERO, held, segments.count(),
                commitCount(), corrupt.get(), found.tornTailBytes, rejectedFull.get(), failedKept.get());
    }

    private long commitCount() {
        commitLock.lock();
        try {
            return groupCommits;
        } finally {
            unlockCommit();
        }
    }

    /** {@return the spool's directory} */
    Path directory() {
        return dir;
    }

    /** {@return how far every write is forced to disk; for tests} */
    long durablePosition() {
        return durablePosition;
    }

    /** {@return how far the writer has marked writes delivered, in memory; for tests} */
    long deliveredPosition() {
        return delivered.position();
    }

    /** {@return the delivery mark last written to the mark file; for tests} */
    long markWritten() {
        commitLock.lock();
        try {
            return segments.markWritten();
        } finally {
            unlockCommit();
        }
    }

    @Override
    public void close() {
        boolean empty;
        commitLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            commitLocked(true, true);
            boolean noSegments = segments.close();
            synchronized (failedLock) {
                if (failedFile != null) {
                    failedFile.close();
                }
                empty = noSegments && failedFile == null;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not close spool " + dir, e);
        } finally {
            unlockCommit();
            LockSupport.unpark(committer.current());
        }
        if (empty && removeWhenEmpty) {
            removeDirectory(); // releases the lock after the files are gone: nobody opens a half-removed spool
        } else {
            releaseLock();
        }
    }

    /** Deletes the mark, the lock file and the directory of a spool every write of which was delivered. */
    private void removeDirectory() {
        try {
            Files.deleteIfExists(dir.resolve(DeliveryMark.FILE));
            Files.deleteIfExists(dir.resolve(LOCK_FILE));
            releaseLock();
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            releaseLock();
            LOG.warn("spool {}: could not remove its empty directory ({})", dir, e.toString());
        }
    }

    private void releaseLock() {
        try {
            fileLock.release();
            lockChannel.close();
        } catch (IOException e) {
            LOG.warn("spool {}: could not release its lock file ({})", dir, e.toString());
        } finally {
            Spool.Builder.HELD.remove(heldAs); // after the OS lock is gone: no second channel while it is held
        }
    }

    @Override
    public String toString() {
        return "Spool[" + dir + (managerName == null ? "" : ", manager=" + managerName) + (closed ? ", closed" : "")
                + "]";
    }

}
