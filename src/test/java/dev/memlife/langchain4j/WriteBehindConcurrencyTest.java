package dev.memlife.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.memory.ChatMemory;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.store.memory.chat.ChatMemoryStore;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import dev.memlife.WriteBehindFigures;
import dev.memlife.WriteBehindReport;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many conversations written from several threads at once through real {@link
 * MessageWindowChatMemory}s, over a store that is now and then slow: every read sees the caller's
 * last write, the store never sees an older state of a conversation after a newer one, and in the
 * end the store holds exactly the last state handed over for every memory id.
 */
@Timeout(120)
class WriteBehindConcurrencyTest {

    private static final int THREADS = 4;
    private static final int CONVERSATIONS_PER_THREAD = 6;
    private static final int SHARED = 3;
    private static final int OPERATIONS = 400;
    private static final int WINDOW = 5;

    /**
     * LangChain4j's in-memory store, a little slow at random, that checks the order of the states
     * it is given: every message text ends with a number that only grows per memory id, so the
     * newest message of each state written must be newer than that of the state before it.
     */
    private static final class OrderCheckingStore implements ChatMemoryStore {
        final InMemoryChatMemoryStore delegate = new InMemoryChatMemoryStore();
        final Map<Object, Long> newestWritten = new ConcurrentHashMap<>();
        final List<String> violations = new CopyOnWriteArrayList<>();

        @Override
        public List<ChatMessage> getMessages(Object memoryId) {
            return delegate.getMessages(memoryId);
        }

        @Override
        public void updateMessages(Object memoryId, List<ChatMessage> messages) {
            maybeSlow();
            long newest = number(messages.get(messages.size() - 1));
            Long before = newestWritten.put(memoryId, newest);
            if (before != null && before >= newest) {
                violations.add(memoryId + ": wrote #" + newest + " after #" + before);
            }
            delegate.updateMessages(memoryId, messages);
        }

        @Override
        public void deleteMessages(Object memoryId) {
            maybeSlow();
            delegate.deleteMessages(memoryId);
        }

        private static void maybeSlow() {
            if (ThreadLocalRandom.current().nextInt(8) == 0) {
                LockSupport.parkNanos(ThreadLocalRandom.current().nextInt(200_000));
            }
        }
    }

    private static long number(ChatMessage m) {
        String text = ((UserMessage) m).singleText();
        return Long.parseLong(text.substring(text.lastIndexOf('#') + 1));
    }

    @Test
    void everyMemoryIdEndsWithTheLastStateHandedOverAndNoStateIsWrittenOutOfOrder() throws Exception {
        OrderCheckingStore backing = new OrderCheckingStore();
        WriteBehindChatMemoryStore store = WriteBehindChatMemoryStore.builder(backing).name("concurrency").build();
        AtomicLong numbers = new AtomicLong();
        // The shared memory ids are written by every thread; this lock makes "the last handed over"
        // well defined for them (the handover itself is atomic; the lock only records its order).
        Object sharedOrder = new Object();
        Map<Object, List<ChatMessage>> lastShared = new ConcurrentHashMap<>();
        Map<Object, List<ChatMessage>> expected = new ConcurrentHashMap<>();
        List<String> staleReads = new CopyOnWriteArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    start.await();
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    List<ChatMemory> memories = new ArrayList<>();
                    List<Deque<ChatMessage>> models = new ArrayList<>();
                    for (int c = 0; c < CONVERSATIONS_PER_THREAD; c++) {
                        memories.add(MessageWindowChatMemory.builder().id("t" + thread + "-c" + c)
                                .maxMessages(WINDOW).chatMemoryStore(store).build());
                        models.add(new ArrayDeque<>());
                    }
                    for (int op = 0; op < OPERATIONS; op++) {
                        if (random.nextInt(4) == 0) {
                            LockSupport.parkNanos(50_000); // think time: lets the writer in between handovers
                        }
                        int roll = random.nextInt(20);
                        if (roll < 2) { // a shared conversation, written whole
                            Object id = "shared-" + random.nextInt(SHARED);
                            synchronized (sharedOrder) { // numbered in the order handed over
                                List<ChatMessage> state = List.of(UserMessage.from(thread + "#" + numbers.incrementAndGet()));
                                store.updateMessages(id, state);
                                lastShared.put(id, state);
                            }
                            continue;
                        }
                        int c = random.nextInt(CONVERSATIONS_PER_THREAD);
                        ChatMemory memory = memories.get(c);
                        Deque<ChatMessage> model = models.get(c);
                        if (roll == 2) {
                            memory.clear();
                            model.clear();
                        } else {
                            UserMessage m = UserMessage.from(memory.id() + "#" + numbers.incrementAndGet());
                            memory.add(m);
                            model.addLast(m);
                            if (model.size() > WINDOW) {
                                model.removeFirst();
                            }
                        }
                        List<ChatMessage> read = store.getMessages(memory.id());
                        if (!read.equals(new ArrayList<>(model))) {
                            staleReads.add(memory.id() + " read " + read + ", expected " + model);
                        }
                    }
                    for (int c = 0; c < CONVERSATIONS_PER_THREAD; c++) {
                        expected.put(memories.get(c).id(), List.copyOf(models.get(c)));
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        expected.putAll(lastShared);

        assertThat(store.flush(Duration.ofSeconds(30))).isTrue();
        WriteBehindReport<Object> report = store.stop(Duration.ofSeconds(30));

        assertThat(staleReads).as("reads that missed the reader's own last write").isEmpty();
        assertThat(backing.violations).as("states written out of order").isEmpty();
        assertThat(report.complete()).as(report.toString()).isTrue();
        for (Map.Entry<Object, List<ChatMessage>> e : expected.entrySet()) {
            assertThat(backing.delegate.getMessages(e.getKey())).as("memory id " + e.getKey()).isEqualTo(e.getValue());
        }
        WriteBehindFigures f = report.figures();
        assertThat(f.pending()).isZero();
        assertThat(f.failedWrites()).isZero();
        assertThat(f.saves() + f.deletes()).as(f.toString())
                .isEqualTo(f.coalesced() + f.writtenSaves() + f.writtenDeletes());
        System.out.println("concurrency: " + f);
    }
}
