package dev.memlife.springai;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.WriteBehindFigures;
import dev.memlife.WriteBehindReport;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.memory.InMemoryChatMemoryRepository;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.UserMessage;

/**
 * Many conversations written from several threads at once through one real Spring AI {@link
 * MessageWindowChatMemory}, over a repository that is now and then slow: every read sees the
 * caller's last write, {@code findConversationIds} agrees with the caller's own conversations, the
 * repository never sees an older state of a conversation after a newer one, and in the end it holds
 * exactly the last state handed over for every conversation id.
 */
@Timeout(120)
class WriteBehindRepositoryConcurrencyTest {

    private static final int THREADS = 4;
    private static final int CONVERSATIONS_PER_THREAD = 6;
    private static final int SHARED = 3;
    private static final int OPERATIONS = 400;
    private static final int WINDOW = 5;

    /**
     * Spring AI's in-memory repository, a little slow at random, that checks the order of the
     * states it is given: every message text ends with a number that only grows per conversation,
     * so the newest message of each state written must be newer than that of the state before it.
     */
    private static final class OrderCheckingRepository implements ChatMemoryRepository {
        final InMemoryChatMemoryRepository delegate = new InMemoryChatMemoryRepository();
        final Map<String, Long> newestWritten = new ConcurrentHashMap<>();
        final List<String> violations = new CopyOnWriteArrayList<>();

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
            maybeSlow();
            long newest = number(messages.get(messages.size() - 1));
            Long before = newestWritten.put(conversationId, newest);
            if (before != null && before >= newest) {
                violations.add(conversationId + ": wrote #" + newest + " after #" + before);
            }
            delegate.saveAll(conversationId, messages);
        }

        @Override
        public void deleteByConversationId(String conversationId) {
            maybeSlow();
            delegate.deleteByConversationId(conversationId);
        }

        private static void maybeSlow() {
            if (ThreadLocalRandom.current().nextInt(8) == 0) {
                LockSupport.parkNanos(ThreadLocalRandom.current().nextInt(200_000));
            }
        }
    }

    private static long number(Message m) {
        String text = m.getText();
        return Long.parseLong(text.substring(text.lastIndexOf('#') + 1));
    }

    @Test
    void everyConversationEndsWithTheLastStateHandedOverAndNoStateIsWrittenOutOfOrder() throws Exception {
        OrderCheckingRepository backing = new OrderCheckingRepository();
        WriteBehindChatMemoryRepository repository = WriteBehindChatMemoryRepository.builder(backing)
                .name("concurrency-sai").build();
        ChatMemory memory = MessageWindowChatMemory.builder().chatMemoryRepository(repository).maxMessages(WINDOW)
                .build();
        AtomicLong numbers = new AtomicLong();
        // The shared conversations are written by every thread; this lock makes "the last handed
        // over" well defined for them (the handover itself is atomic; the lock only records its order).
        Object sharedOrder = new Object();
        Map<String, List<Message>> lastShared = new ConcurrentHashMap<>();
        Map<String, List<Message>> expected = new ConcurrentHashMap<>();
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
                    List<Deque<Message>> models = new ArrayList<>();
                    for (int c = 0; c < CONVERSATIONS_PER_THREAD; c++) {
                        models.add(new ArrayDeque<>());
                    }
                    for (int op = 0; op < OPERATIONS; op++) {
                        if (random.nextInt(4) == 0) {
                            LockSupport.parkNanos(50_000); // think time: lets the writer in between handovers
                        }
                        int roll = random.nextInt(20);
                        if (roll < 2) { // a shared conversation, written whole
                            String id = "shared-" + random.nextInt(SHARED);
                            synchronized (sharedOrder) { // numbered in the order handed over
                                List<Message> state = List.of(new UserMessage(thread + "#" + numbers.incrementAndGet()));
                                repository.saveAll(id, state);
                                lastShared.put(id, state);
                            }
                            continue;
                        }
                        int c = random.nextInt(CONVERSATIONS_PER_THREAD);
                        String id = "t" + thread + "-c" + c;
                        Deque<Message> model = models.get(c);
                        if (roll == 2) {
                            memory.clear(id);
                            model.clear();
                        } else {
                            Message m = new UserMessage(id + "#" + numbers.incrementAndGet());
                            memory.add(id, m);
                            model.addLast(m);
                            if (model.size() > WINDOW) {
                                model.removeFirst();
                            }
                        }
                        List<Message> read = memory.get(id);
                        if (!read.equals(new ArrayList<>(model))) {
                            staleReads.add(id + " read " + read + ", expected " + model);
                        }
                        if (random.nextInt(10) == 0) {
                            Set<String> listed = new HashSet<>(repository.findConversationIds());
                            for (int k = 0; k < CONVERSATIONS_PER_THREAD; k++) {
                                String own = "t" + thread + "-c" + k;
                                // This thread alone writes its conversations, so it knows whether each exists:
                                // every add leaves at least one message, a clear deletes the conversation.
                                if (listed.contains(own) == models.get(k).isEmpty()) {
                                    staleReads.add("findConversationIds " + (listed.contains(own) ? "listed " : "missed ")
                                            + own + " with " + models.get(k).size() + " messages");
                                }
                            }
                        }
                    }
                    for (int c = 0; c < CONVERSATIONS_PER_THREAD; c++) {
                        expected.put("t" + thread + "-c" + c, List.copyOf(models.get(c)));
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

        assertThat(repository.flush(Duration.ofSeconds(30))).isTrue();
        WriteBehindReport<String> report = repository.stop(Duration.ofSeconds(30));

        assertThat(staleReads).as("reads that missed the reader's own last write").isEmpty();
        assertThat(backing.violations).as("states written out of order").isEmpty();
        assertThat(report.complete()).as(report.toString()).isTrue();
        for (Map.Entry<String, List<Message>> e : expected.entrySet()) {
            assertThat(backing.delegate.findByConversationId(e.getKey())).as("conversation " + e.getKey())
                    .isEqualTo(e.getValue());
        }
        WriteBehindFigures f = report.figures();
        assertThat(f.pending()).isZero();
        assertThat(f.failedWrites()).isZero();
        assertThat(f.saves() + f.deletes()).as(f.toString())
                .isEqualTo(f.coalesced() + f.writtenSaves() + f.writtenDeletes());
        System.out.println("concurrency: " + f);
    }
}
