package dev.memlife.springai;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.memory.InMemoryChatMemoryRepository;
import org.springframework.ai.chat.messages.Message;

/**
 * A repository the test controls, over Spring AI's own {@link InMemoryChatMemoryRepository}: it
 * counts and logs every write, can hold writes until the test lets them through (ignoring
 * interrupts, like a hung database call), and can fail chosen writes. Reads are never held. Every
 * hold is bounded by {@link #MAX_HOLD}, so a broken test cannot hang the build.
 */
final class SlowChatMemoryRepository implements ChatMemoryRepository {

    static final Duration MAX_HOLD = Duration.ofSeconds(60);

    private final InMemoryChatMemoryRepository delegate = new InMemoryChatMemoryRepository();
    private final List<String> log = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger saves = new AtomicInteger();
    private final AtomicInteger deletes = new AtomicInteger();
    private final Semaphore entered = new Semaphore(0);
    private final Semaphore passes = new Semaphore(0);
    private volatile boolean held;
    private volatile Predicate<String> failing = id -> false;
    private final AtomicInteger failNext = new AtomicInteger();

    /** From now on every write waits until {@link #allow} or {@link #open} lets it through. */
    void hold() {
        held = true;
    }

    /** Lets {@code n} held writes through. */
    void allow(int n) {
        passes.release(n);
    }

    /** Lets every write through, now and later. */
    void open() {
        held = false;
        passes.release(1_000_000);
    }

    /** Waits until a write has entered the repository (held or not); each call consumes one entry. */
    boolean awaitEntered(Duration timeout) throws InterruptedException {
        return entered.tryAcquire(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** The next {@code n} writes throw. */
    void failNext(int n) {
        failNext.set(n);
    }

    /** Every write of a conversation {@code ids} accepts throws. */
    void failFor(Predicate<String> ids) {
        failing = ids;
    }

    @Override
    public List<String> findConversationIds() {
        return delegate.findConversationIds();
    }

    @Override
    public List<Message> findByConversationId(String conversationId) {
        return delegate.findByConversationId(conversationId);
    }

    @Override
    public void saveAll(String conversationId, List<Message> messages) {
        saves.incrementAndGet();
        enter();
        failIfAsked(conversationId);
        delegate.saveAll(conversationId, messages);
        log.add("save " + conversationId + " " + texts(messages));
    }

    @Override
    public void deleteByConversationId(String conversationId) {
        deletes.incrementAndGet();
        enter();
        failIfAsked(conversationId);
        delegate.deleteByConversationId(conversationId);
        log.add("delete " + conversationId);
    }

    private void enter() {
        entered.release();
        if (!held) {
            return;
        }
        long end = System.nanoTime() + MAX_HOLD.toNanos();
        boolean interrupted = false;
        while (true) {
            try {
                if (passes.tryAcquire(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    break;
                }
                throw new IllegalStateException("held longer than " + MAX_HOLD + ": the test never let it through");
            } catch (InterruptedException e) {
                interrupted = true; // a hung call ignores interrupts
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void failIfAsked(String conversationId) {
        if (failing.test(conversationId) || failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new IllegalStateException("repository down for conversation " + conversationId);
        }
    }

    /** {@return saveAll calls the repository received (held, failed or written)} */
    int saves() {
        return saves.get();
    }

    /** {@return deleteByConversationId calls the repository received} */
    int deletes() {
        return deletes.get();
    }

    /** {@return the writes that completed, in order: "save ID [texts]" or "delete ID"} */
    List<String> log() {
        synchronized (log) {
            return List.copyOf(log);
        }
    }

    /** {@return the texts the repository holds for {@code conversationId}, read past any write-behind} */
    List<String> stored(String conversationId) {
        return texts(delegate.findByConversationId(conversationId));
    }

    /** {@return the conversation ids the repository holds, read past any write-behind} */
    List<String> storedIds() {
        return delegate.findConversationIds();
    }

    static List<String> texts(List<Message> messages) {
        return messages.stream().map(Message::getText).collect(Collectors.toList());
    }
}
