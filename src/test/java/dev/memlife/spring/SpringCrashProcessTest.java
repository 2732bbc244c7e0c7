package dev.memlife.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.store.JdbcMemoryProvider;
import dev.memlife.store.StoredTurn;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway's door through the starter keeps the crash promise: a real Spring Boot application
 * ({@link SpringChildMain}, its agents spooled by {@code memlife.spool.dir}) under concurrent load
 * from four conversations, each turn answered 200 only once it is on disk. Killed with SIGKILL
 * mid-load (its store held, so every acknowledged turn is only in the spools) and started again on
 * the same spool and database, it replays what the crash left before it serves, and every
 * acknowledged turn is stored exactly once, in its conversation's order. Sent
 * SIGTERM mid-load instead, it drains, and its shutdown line's write totals are what the database
 * holds. Through LangChain4j's write-behind store, SIGTERM mid-load writes every acknowledged
 * message.
 */
@Timeout(180)
class SpringCrashProcessTest {

    private static final int CONVERSATIONS = 4;
    private static final int ACKED_BEFORE_THE_END = 80;
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Pattern TURN = Pattern.compile("turn-(c\\d+)-(\\d+)");

    @TempDir
    Path dir;

    /** What the clients saw: per conversation, the turns answered 200, in the order they were sent. */
    private final Map<String, List<Integer>> acked = new ConcurrentHashMap<>();
    private final AtomicInteger ackedCount = new AtomicInteger();
    private final AtomicInteger accepted = new AtomicInteger();
    private final List<String> otherAnswers = new CopyOnWriteArrayList<>();

    @Test
    void sigkillMidLoadLosesNoAcknowledgedTurnAndTheRestartReplaysItBeforeItServes() throws Exception {
        Path db = dir.resolve("memory.db");
        Path spools = dir.resolve("spools");
        // The first run's store takes no write: every acknowledged turn is only in the spools at the kill.
        killMidLoadWithTheStoreHeld("first", "/durable?sid=", "--memlife.spool.dir=" + spools, "--child.hold-store=true");

        String restartLog;
        try (SpringSigtermProcessTest.Child again = SpringSigtermProcessTest.Child.start(run("second"), db,
                "--memlife.spool.dir=" + spools, "--logging.level.dev.memlife.spring=INFO")) {
            restartLog = again.stderrQuietly(); // the test logback's appender; the child serves (PORT) by now
            again.sigterm();
            again.awaitExit(WAIT);
        }
        Matcher recovered = Pattern.compile("memlife: recovered \\d+ spools a crash left in \\S+: (\\d+) writes replayed")
                .matcher(restartLog);
        assertThat(recovered.find()).as("the restart replayed the crashed run's spools before it served: %s", restartLog)
                .isTrue();
        assertThat(Long.parseLong(recovered.group(1))).as("writes replayed: at least every acknowledged one")
                .isGreaterThanOrEqualTo(ackedCount.get());
        assertEveryAcknowledgedTurnStoredOnceInOrder(db);
    }

    @Test
    void sigtermMidLoadDrainsAndTheShutdownTotalsAreWhatTheDatabaseHolds() throws Exception {
        Path db = dir.resolve("memory.db");
        List<String> stdout;
        List<Thread> clients;
        try (SpringSigtermProcessTest.Child child = SpringSigtermProcessTest.Child.start(run("only"), db,
                "--memlife.spool.dir=" + dir.resolve("spools"))) {
            clients = load(child);
            await().atMost(WAIT).until(() -> ackedCount.get() >= ACKED_BEFORE_THE_END);
            child.sigterm();
            joinAll(clients); // each stops at its first refusal
            child.awaitExit(WAIT);
            stdout = child.lines();
        }
        int stored = assertEveryAcknowledgedTurnStoredOnceInOrder(db);

        String drained = stdout.stream().filter(l -> l.startsWith("DRAINED ")).findFirst().orElseThrow();
        long acceptedInLog = figure(drained, "accepted");
        assertThat(acceptedInLog).as("accepted in the shutdown report: every turn answered 200 or 202")
                .isEqualTo(accepted.get());
        assertThat(figure(drained, "delivered")).as("delivered: %s", drained).isEqualTo(acceptedInLog);
        assertThat(figure(drained, "failed") + figure(drained, "abandoned")).isZero();
        assertThat(stored).as("rows in the database").isEqualTo(acceptedInLog);
    }

    /**
     * LangChain4j's door at SIGTERM: a {@code WriteBehindChatMemoryStore} bean over a JDBC store,
     * four conversations adding messages under load; after SIGTERM mid-load the store behind holds,
     * for each conversation, every message it answered 200 for, in order, each once; and the
     * write-behind store's close logged that it left nothing unwritten.
     */
    @Test
    void sigtermMidLoadThroughTheLangChain4jStoreWritesEveryAcknowledgedMessage() throws Exception {
        Path chats = dir.resolve("chats.db");
        Path run = run("l4j");
        List<Thread> clients;
        try (SpringSigtermProcessTest.Child child = SpringSigtermProcessTest.Child.start(run, dir.resolve("memory.db"),
                "--child.l4j-file=" + chats, "--memlife.gateway.enabled=true", "--logging.level.dev.memlife=INFO")) {
            clients = load(child, "/l4j?cid=");
            await().atMost(WAIT).until(() -> ackedCount.get() >= ACKED_BEFORE_THE_END);
            child.sigterm();
            joinAll(clients);
            child.awaitExit(WAIT);
            assertCloseSummaryCounts(child.stderrQuietly(), "write-behind chat memory store 'chat-memory'");
        }
        assertEveryAcknowledgedMessageWrittenOnceInOrder(chats);
    }

    /**
     * The write-behind close's summary line: nothing left unwritten, and the saves it took are the
     * requests answered 200 (each one save), so its totals add up to what the clients sent.
     */
    private void assertCloseSummaryCounts(String log, String component) {
        Matcher m = Pattern.compile(Pattern.quote(component)
                + ": stopped in \\d+ ms of \\d+ ms, nothing left unwritten: \\d+ written at shutdown; (\\d+) saves and "
                + "(\\d+) deletes taken in all").matcher(log);
        assertThat(m.find()).as("the close's summary in %s", log).isTrue();
        assertThat(Integer.parseInt(m.group(1))).as("saves taken: one per request answered 200")
                .isEqualTo(ackedCount.get());
        assertThat(Integer.parseInt(m.group(2))).isZero();
    }

    /**
     * LangChain4j's door at SIGKILL: the write-behind store with a durable spool, its store behind
     * held so that no acknowledged state reached it; killed mid-load and started again on the same
     * spool and file, it writes every conversation's last acknowledged state, whole and in order.
     */
    @Test
    void sigkillMidLoadThroughTheLangChain4jStoreWithASpoolLosesNoAcknowledgedMessage() throws Exception {
        Path chats = dir.resolve("chats.db");
        Path spool = dir.resolve("chat-spool");
        killMidLoadWithTheStoreHeld("l4j-first", "/l4j?cid=", "--child.l4j-file=" + chats, "--child.l4j-spool=" + spool,
                "--child.l4j-held=true", "--memlife.gateway.enabled=true");
        try (dev.memlife.langchain4j.SqliteChatMemoryStore behind = new dev.memlife.langchain4j.SqliteChatMemoryStore(chats)) {
            for (String cid : acked.keySet()) {
                assertThat(behind.getMessages(cid)).as("%s: nothing reached the held store", cid).isEmpty();
            }
        }
        try (SpringSigtermProcessTest.Child again = SpringSigtermProcessTest.Child.start(run("l4j-second"),
                dir.resolve("memory.db"), "--child.l4j-file=" + chats, "--child.l4j-spool=" + spool,
                "--memlife.gateway.enabled=true")) {
            again.sigterm(); // the replayed states are written by the store's close at the latest
            again.awaitExit(WAIT);
        }
        assertEveryAcknowledgedMessageWrittenOnceInOrder(chats);
    }

    private void assertEveryAcknowledgedMessageWrittenOnceInOrder(Path chats) throws Exception {
        try (dev.memlife.langchain4j.SqliteChatMemoryStore behind = new dev.memlife.langchain4j.SqliteChatMemoryStore(chats)) {
            assertEveryAcknowledgedMessageWrittenOnceInOrder(cid -> behind.getMessages(cid).stream()
                    .map(m -> ((dev.langchain4j.data.message.UserMessage) m).singleText()).toList());
        }
    }

    /**
     * Spring AI's door at SIGKILL: the write-behind repository with a durable spool, the repository
     * behind held; killed mid-load and started again on the same spool and file, it writes every
     * conversation's last acknowledged state. Then the same door at SIGTERM mid-load.
     */
    @Test
    void theSpringAiRepositoryWithASpoolLosesNoAcknowledgedMessageToSigkillOrSigterm() throws Exception {
        Path chats = dir.resolve("sai.db");
        Path spool = dir.resolve("sai-spool");
        killMidLoadWithTheStoreHeld("sai-first", "/sai?cid=", "--child.sai-file=" + chats, "--child.sai-spool=" + spool,
                "--child.sai-held=true", "--memlife.gateway.enabled=true");
        List<Thread> clients;
        int ackedBeforeTheKill = ackedCount.get();
        try (SpringSigtermProcessTest.Child again = SpringSigtermProcessTest.Child.start(run("sai-second"),
                dir.resolve("memory.db"), "--child.sai-file=" + chats, "--child.sai-spool=" + spool,
                "--memlife.gateway.enabled=true", "--logging.level.dev.memlife=INFO")) {
            // four more conversations after the restart, then SIGTERM mid-load
            clients = load(again, "/sai?cid=", true);
            await().atMost(WAIT).until(() -> ackedCount.get() >= ackedBeforeTheKill + ACKED_BEFORE_THE_END);
            again.sigterm();
            joinAll(clients);
            again.awaitExit(WAIT);
            String log = again.stderrQuietly();
            Matcher replayed = Pattern.compile("(\\d+) states an earlier run left, replayed before the first read")
                    .matcher(log);
            assertThat(replayed.find()).as("the restart replayed the spool: %s", log).isTrue();
            assertThat(Integer.parseInt(replayed.group(1))).as("one state per conversation").isEqualTo(CONVERSATIONS);
            int afterRestart = ackedCount.get() - ackedBeforeTheKill;
            Matcher summary = Pattern.compile("write-behind chat memory repository 'chat-memory': stopped in .*?"
                    + "nothing left unwritten: \\d+ written at shutdown; (\\d+) saves").matcher(log);
            assertThat(summary.find()).as("the close's summary in %s", log).isTrue();
            assertThat(Integer.parseInt(summary.group(1))).as("saves: the %d replayed and one per request answered 200",
                    CONVERSATIONS).isEqualTo(CONVERSATIONS + afterRestart);
        }
        try (dev.memlife.springai.SqliteChatMemoryRepository behind = new dev.memlife.springai.SqliteChatMemoryRepository(chats)) {
            assertEveryAcknowledgedMessageWrittenOnceInOrder(cid -> behind.findByConversationId(cid).stream()
                    .map(org.springframework.ai.chat.messages.Message::getText).toList());
        }
    }

    private void assertEveryAcknowledgedMessageWrittenOnceInOrder(
            Function<String, List<String>> read) {
        for (Map.Entry<String, List<Integer>> conversation : acked.entrySet()) {
            String cid = conversation.getKey();
            List<String> messages = read.apply(cid);
            List<String> expected = new ArrayList<>();
            for (int n = 1; n <= messages.size(); n++) {
                expected.add("turn-" + cid + "-" + n);
            }
            assertThat(messages).as("%s: its messages, once each, in order", cid).isEqualTo(expected);
            int lastAcked = conversation.getValue().isEmpty() ? 0
                    : conversation.getValue().get(conversation.getValue().size() - 1);
            assertThat(messages.size()).as("%s: every message answered 200 (others: %s)", cid, otherAnswers)
                    .isGreaterThanOrEqualTo(lastAcked);
        }
    }

    /**
     * Starts a child on this test's database with {@code args} (which hold its store), loads it
     * through {@code path} until {@link #ACKED_BEFORE_THE_END} turns were answered 200 and the store
     * is held, then kills it with SIGKILL, mid-load.
     */
    private void killMidLoadWithTheStoreHeld(String runName, String path, String... args) throws Exception {
        List<Thread> clients;
        try (SpringSigtermProcessTest.Child child = SpringSigtermProcessTest.Child.start(run(runName),
                dir.resolve("memory.db"), args)) {
            clients = load(child, path);
            await().atMost(WAIT).until(() -> ackedCount.get() >= ACKED_BEFORE_THE_END);
            assertThat(child.awaitLine("STORE_HELD")).isEqualTo("STORE_HELD");
        } // close(): SIGKILL, mid-load
        joinAll(clients);
    }

    private List<Thread> load(SpringSigtermProcessTest.Child child) {
        return load(child, "/durable?sid=");
    }

    /** Four conversations, each sending its turns one after the other until the child refuses or dies. */
    private List<Thread> load(SpringSigtermProcessTest.Child child, String path) {
        return load(child, path, false);
    }

    /**
     * @param others whether these are four other conversations (c4 to c7): after a restart, new
     *     ones, since a turn in flight at the kill may be in the replayed state without its answer
     */
    private List<Thread> load(SpringSigtermProcessTest.Child child, String path, boolean others) {
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < CONVERSATIONS; c++) {
            String sid = "c" + (others ? c + CONVERSATIONS : c);
            acked.put(sid, new CopyOnWriteArrayList<>());
            Thread t = new Thread(() -> {
                for (int n = 1; ; n++) {
                    String answer;
                    try {
                        answer = child.get(path + sid + "&n=" + n);
                    } catch (IOException e) {
                        return; // killed, or no longer taking connections
                    }
                    if (answer.startsWith("200 ")) {
                        acked.get(sid).add(n);
                        ackedCount.incrementAndGet();
                        accepted.incrementAndGet();
                    } else if (answer.startsWith("202 ")) {
                        accepted.incrementAndGet(); // accepted, but not on disk within its wait
                        otherAnswers.add(answer);
                    } else {
                        otherAnswers.add(answer); // refused: the child is stopping
                        return;
                    }
                }
            }, "client-" + sid);
            t.start();
            clients.add(t);
        }
        return clients;
    }

    /** {@return how many turns the database holds}, after checking them against what the clients saw. */
    private int assertEveryAcknowledgedTurnStoredOnceInOrder(Path db) {
        int rows = 0;
        try (JdbcMemoryProvider readBack = JdbcMemoryProvider.sqlite(db)) {
            for (Map.Entry<String, List<Integer>> conversation : acked.entrySet()) {
                String sid = conversation.getKey();
                List<StoredTurn> turns = readBack.turns(sid);
                List<Integer> stored = new ArrayList<>();
                for (StoredTurn t : turns) {
                    Matcher m = TURN.matcher(t.userContent());
                    assertThat(m.matches()).as("a turn of this test: %s", t.userContent()).isTrue();
                    assertThat(m.group(1)).isEqualTo(sid);
                    stored.add(Integer.parseInt(m.group(2)));
                }
                assertThat(turns).extracting(StoredTurn::writeId).as("%s: stored once each", sid).doesNotHaveDuplicates();
                assertThat(stored).as("%s: in the order it was sent", sid).isSorted().doesNotHaveDuplicates();
                assertThat(stored).as("%s: every turn answered 200 (others: %s)", sid, otherAnswers)
                        .containsAll(conversation.getValue());
                rows += turns.size();
            }
            assertThat(readBack.countTurns()).as("nothing but these conversations' turns").isEqualTo(rows);
        }
        return rows;
    }

    private Path run(String name) throws IOException {
        return Files.createDirectories(dir.resolve(name));
    }

    private static void joinAll(List<Thread> threads) throws InterruptedException {
        for (Thread t : threads) {
            t.join(WAIT.toMillis());
            assertThat(t.isAlive()).as("%s still running", t.getName()).isFalse();
        }
    }

    /** A count from the drain report's write figures ({@code WriteFigures[accepted=12, delivered=12, ...]}). */
    private static long figure(String drained, String name) {
        Matcher m = Pattern.compile("WriteFigures\\[.*?\\b" + name + "=(\\d+)").matcher(drained);
        assertThat(m.find()).as("%s in %s", name, drained).isTrue();
        return Long.parseLong(m.group(1));
    }
}
