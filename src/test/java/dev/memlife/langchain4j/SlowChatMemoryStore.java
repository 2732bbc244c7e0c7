package dev.memlife.langchain4j;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.store.memory.chat.ChatMemoryStore;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * A store the test controls, over LangChain4j's own {@link InMemoryChatMemoryStore}: it counts and
 * logs every write, can hold writes until the test lets them through (ignoring interrupts, like a
 * hung database call), and can fail chosen writes. Reads are never held. Every hold is bounded by
 * {@link #MAX_HOLD}, so a broken test cannot hang the build.
 */
final class SlowChatMemoryStore implements ChatMemoryStore {

    static final Duration MAX_HOLD = Duration.ofSeconds(60);

    private final InMemoryChatMemoryStore delegate = new InMemoryChatMemoryStore();
    private final List<String> log = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger updates = new AtomicInteger();
    private final AtomicInteger deletes = new AtomicInteger();
    private final Semaphore entered = new Semaphore(0);
    private final Semaphore passes = new Semaphore(0);
    private volatile boolean held;
    private volatile Predicate<Object> failing = id -> false;
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

    /** Waits until a write has entered the store (held or not); each call consumes one entry. */
    boolean awaitEntered(Duration timeout) throws InterruptedException {
        return entered.tryAcquire(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** The next {@code n} writes throw. */
    void failNext(int n) {
        failNext.set(n);
    }

    /** Every write of a memory id {@code ids} accepts throws. */
    void failFor(Predicate<Object> ids) {
        failing = ids;
    }

    @Override
    public List<ChatMessage> getMessages(Object memoryId) {
        return delegate.getMessages(memoryId);
    }

    @Override
    public void updateMessages(Object memoryId, List<ChatMessage> messages) {
        updates.incrementAndGet();
        enter();
        failIfAsked(memoryId);
        delegate.updateMessages(memoryId, messages);
        log.add("update " + memoryId + " " + texts(messages));
    }

    @Override
    public void deleteMessages(Object memoryId) {
        deletes.incrementAndGet();
        enter();
        failIfAsked(memoryId);
        delegate.deleteMessages(memoryId);
        log.add("delete " + memoryId);
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

    private void failIfAsked(Object memoryId) {
        if (failing.test(memoryId) || failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new IllegalStateException("store down for memory id " + memoryId);
        }
    }

    /** {@return updateMessages calls the store received (held, failed or written)} */
    int updates() {
        return updates.get();
    }

    /** {@return deleteMessages calls the store received} */
    int deletes() {
        return deletes.get();
    }

    /** {@return the writes that completed, in order: "update ID [texts]" or "delete ID"} */
    List<String> log() {
        synchronized (log) {
            return List.copyOf(log);
        }
    }

    /** {@return the texts the store holds for {@code memoryId}, read past any write-behind} */
    List<String> stored(Object memoryId) {
        return texts(delegate.getMessages(memoryId));
    }

    static List<String> texts(List<ChatMessage> messages) {
        return messages.stream().map(SlowChatMemoryStore::text).collect(Collectors.toList());
    }

    static String text(ChatMessage m) {
        if (m instanceof UserMessage) {
            return ((UserMessage) m).singleText();
        }
        if (m instanceof AiMessage) {
            return ((AiMessage) m).text();
        }
        return m.toString();
    }
}
