package dev.memlife.bench;

import dev.langchain4j.model.embedding.onnx.allminilml6v2.AllMiniLmL6V2EmbeddingModel;
import dev.memlife.WriteBehindFigures;
import dev.memlife.springai.MiniLmEmbeddingModel;
import dev.memlife.springai.WriteBehindVectorStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.vectorstore.VectorStoreChatMemoryAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.document.Document;
import org.springframework.ai.embedding.BatchingStrategy;
import org.springframework.ai.embedding.EmbeddingModel;
import org.springframework.ai.embedding.EmbeddingOptions;
import org.springframework.ai.embedding.EmbeddingRequest;
import org.springframework.ai.embedding.EmbeddingResponse;
import org.springframework.ai.embedding.TokenCountBatchingStrategy;
import org.springframework.ai.vectorstore.SearchRequest;
import org.springframework.ai.vectorstore.SimpleVectorStore;
import org.springframework.ai.vectorstore.VectorStore;
import org.springframework.ai.vectorstore.filter.Filter;

/**
 * Long-term memory off the request path: Spring AI's {@code VectorStoreChatMemoryAdvisor} over a
 * synchronous {@code SimpleVectorStore} against the same advisor over a {@link WriteBehindVectorStore}
 * in front of one, with a real embedding model in process (all-MiniLM-L6-v2 on ONNX, LangChain4j's
 * packaging of it, one instance for every contender).
 *
 * <ul>
 *   <li>{@link #advisor}: requests through a {@code ChatClient} over a chat model that answers "ok"
 *       at once, with no advisor, the advisor over the synchronous store, and the advisor over the
 *       write-behind one; each request timed, and each call the advisor makes into its store (its
 *       {@code add}s and its search) timed apart.
 *   <li>{@link #addAlone}: one document per {@code add} on the caller's thread, paced one add every
 *       {@value #ADD_PACE_NANOS} ns at most: the synchronous store, the write-behind one (its writer
 *       embedding meanwhile), and one {@code embed} call of the model for reference.
 *   <li>{@link #throughput}: texts embedded per second: one {@code embed} call per text, one {@code
 *       SimpleVectorStore.add} per text, every text added one by one to a write-behind store with
 *       batch size {@value #BATCH} and flushed, and the model's {@code embed(List)} in batches of
 *       {@value #BATCH}; then the same weights with batched inference ({@link BatchedMiniLm}, one ONNX
 *       run per call for all its texts): one {@code embed} call per text, every text added to a
 *       write-behind store over a store embedding each add in one call, and {@code embed(List)} in
 *       batches.
 * </ul>
 * Contenders run in rounds, the order rotated each round; every figure pools the rounds.
 */
final class LongTermMemoryBench {

    static final int BATCH = 64;
    static final long ADD_PACE_NANOS = 2_000_000;
    static final String WRITER_PREFIX = "memlife-vector-writer-";
    static final Duration FLUSH = Duration.ofMinutes(5);

    private static MiniLm model;
    private static double modelLoadSeconds;

    private LongTermMemoryBench() {}

    /** The one model of every contender, loaded on first use (a few seconds: ~90 MB of weights). */
    static synchronized MiniLm model() {
        if (model == null) {
            long t0 = System.nanoTime();
            model = new MiniLm(new AllMiniLmL6V2EmbeddingModel());
            model.embed("warming up the ONNX session");
            modelLoadSeconds = (System.nanoTime() - t0) / 1e9;
            System.out.printf("  all-MiniLM-L6-v2 loaded in %.1f s%n", modelLoadSeconds);
        }
        return model;
    }

    static double modelLoadSeconds() {
        return modelLoadSeconds;
    }

    // ---- the pieces ----------------------------------------------------------------------------

    /**
     * all-MiniLM-L6-v2 as a Spring AI model: LangChain4j's in-process model, which runs one ONNX
     * session call per text; several texts in one call are spread over a pool of as many threads as
     * cores. Counts the calls and texts its writer threads make.
     */
    static final class MiniLm implements EmbeddingModel {
        private final AllMiniLmL6V2EmbeddingModel model;
        final AtomicLong writerCalls = new AtomicLong();
        final AtomicLong writerTexts = new AtomicLong();

        MiniLm(AllMiniLmL6V2EmbeddingModel model) {
            this.model = model;
        }

        @Override
        public EmbeddingResponse call(EmbeddingRequest request) {
            List<String> texts = request.getInstructions();
            if (Thread.currentThread().getName().startsWith(WRITER_PREFIX)) {
                writerCalls.incrementAndGet();
                writerTexts.addAndGet(texts.size());
            }
            return MiniLmEmbeddingModel.embedAll(model, texts);
        }

        @Override
        public float[] embed(Document document) {
            return embed(document.getText());
        }

        @Override
        public int dimensions() {
            return 384;
        }

        void resetCounts() {
            writerCalls.set(0);
            writerTexts.set(0);
        }
    }

    /** A chat model that answers "ok" at once. */
    static final class FixedAnswer implements ChatModel {
        @Override
        public ChatResponse call(Prompt prompt) {
            return new ChatResponse(List.of(new Generation(new AssistantMessage("ok"))));
        }
    }

    /** Samples in nanoseconds. */
    static final class Samples {
        private long[] values = new long[1024];
        private int n;

        void add(long nanos) {
            if (n == values.length) {
                values = Arrays.copyOf(values, n * 2);
            }
            values[n++] = nanos;
        }

        void addAll(Samples other) {
            for (int i = 0; i < other.n; i++) {
                add(other.values[i]);
            }
        }

        Percentiles percentiles() {
            if (n == 0) {
                throw new IllegalStateException("no samples");
            }
            long[] sorted = Arrays.copyOf(values, n);
            Arrays.sort(sorted);
            double sum = 0;
            long overOneMs = 0;
            for (long v : sorted) {
                sum += v;
                overOneMs += v > 1_000_000 ? 1 : 0;
            }
            return new Percentiles(n, at(sorted, 0.50), at(sorted, 0.99), at(sorted, 0.999), sorted[n - 1], sum / n,
                    overOneMs);
        }

        /** {@return the percentiles, or NaN ones if there is no sample} */
        Percentiles percentilesOrNone() {
            return n == 0 ? new Percentiles(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0)
                    : percentiles();
        }

        /** The nearest-rank percentile. */
        private static double at(long[] sorted, double q) {
            int rank = (int) Math.ceil(q * sorted.length);
            return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
        }
    }

    /** Percentiles of samples, in nanoseconds. */
    record Percentiles(long samples, double p50, double p99, double p999, double max, double mean, long overOneMs) {
        Map<String, Object> figures() {
            return BenchMain.entry("samples", samples, "p50Nanos", p50, "p99Nanos", p99, "p999Nanos", p999,
                    "maxNanos", max, "meanNanos", mean, "overOneMs", overOneMs);
        }

        String micros() {
            return String.format("p50 %,.0f µs, p99 %,.0f µs", p50 / 1e3, p99 / 1e3);
        }
    }

    /**
     * The store the advisor sees: times its adds and searches on the request thread while recording.
     * Over a write-behind store, also sorts the adds by whether its writer had nothing to write
     * before the add (the add wakes it) or was writing (asked before the add's clock starts).
     */
    static final class Timed implements VectorStore {
        private final VectorStore store;
        private final WriteBehindVectorStore writeBehind;
        final Samples adds = new Samples();
        final Samples addsWakingWriter = new Samples();
        final Samples addsWhileWriting = new Samples();
        final Samples searches = new Samples();
        volatile boolean recording;

        Timed(VectorStore store) {
            this.store = store;
            this.writeBehind = store instanceof WriteBehindVectorStore wb ? wb : null;
        }

        @Override
        public void add(List<Document> documents) {
            boolean idle = recording && writeBehind != null && writeBehind.figures().pending() == 0;
            long t0 = System.nanoTime();
            store.add(documents);
            long t1 = System.nanoTime();
            if (recording) {
                adds.add(t1 - t0);
                if (writeBehind != null) {
                    (idle ? addsWakingWriter : addsWhileWriting).add(t1 - t0);
                }
            }
        }

        @Override
        public List<Document> similaritySearch(SearchRequest request) {
            long t0 = System.nanoTime();
            List<Document> found = store.similaritySearch(request);
            long t1 = System.nanoTime();
            if (recording) {
                searches.add(t1 - t0);
            }
            return found;
        }

        @Override
        public void delete(List<String> idList) {
            store.delete(idList);
        }

        @Override
        public void delete(Filter.Expression filterExpression) {
            store.delete(filterExpression);
        }

        @Override
        public String getName() {
            return store.getName();
        }

        @Override
        public <T> Optional<T> getNativeClient() {
            return store.getNativeClient();
        }
    }

    /** Short sentences a user might say, varied: subject, verb, object, time and a number. */
    static List<String> texts(int n, long seed) {
        String[] subjects = {"I", "My sister", "Our team", "The landlord", "My doctor", "Grandpa", "The new manager",
            "Tom from accounting", "The kids", "My neighbour", "The plumber", "Our client in Berlin"};
        String[] verbs = {"moved", "asked me about", "booked a table for", "forgot about", "complained about",
            "recommended", "cancelled", "is worried about", "wants to discuss", "paid for", "postponed",
            "keeps asking about"};
        String[] objects = {"the budget review", "the dentist appointment", "the trip to Lisbon", "the broken boiler",
            "the quarterly report", "the birthday party", "the gym membership", "the insurance claim",
            "the school play", "the new laptop", "the garden fence", "the flight to Osaka", "the piano lessons",
            "the tax return", "the wedding gift", "the car service"};
        String[] times = {"next Tuesday", "after lunch", "on the 14th", "this weekend", "before the holidays",
            "tomorrow morning", "at the end of the month", "last night", "in two weeks", "on Friday evening"};
        Random random = new Random(seed);
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(subjects[random.nextInt(subjects.length)] + " " + verbs[random.nextInt(verbs.length)] + " "
                    + objects[random.nextInt(objects.length)] + " " + times[random.nextInt(times.length)]
                    + ", note " + (i + 1) + ".");
        }
        return out;
    }

    private static SimpleVectorStore simpleStore() {
        return SimpleVectorStore.builder(model()).build();
    }

    private static WriteBehindVectorStore writeBehind(VectorStore store, String name) {
        return WriteBehindVectorStore.builder(store).name(name).batchSize(BATCH).build();
    }

    private static void flush(WriteBehindVectorStore store) {
        if (!store.flush(FLUSH)) {
            throw new IllegalStateException(store + " did not flush within " + FLUSH);
        }
    }

    // ---- 1. request latency with the advisor ---------------------------------------------------

    /** One contender of the request-latency run. */
    static final class AdvisorContender {
        final String key;
        final String what;
        final ChatClient chat;
        final Timed timed;
        final WriteBehindVectorStore writeBehind;
        final String conversation;
        final Samples requests = new Samples();
        final List<Map<String, Object>> flushes = new ArrayList<>();

        AdvisorContender(String key, String what, ChatClient chat, Timed timed, WriteBehindVectorStore writeBehind) {
            this.key = key;
            this.what = what;
            this.chat = chat;
            this.timed = timed;
            this.writeBehind = writeBehind;
            this.conversation = "bench-" + key;
        }

        long request(String text) {
            long t0 = System.nanoTime();
            String answer = chat.prompt().user(text).advisors(a -> a.param(ChatMemory.CONVERSATION_ID, conversation))
                    .call().content();
            long t1 = System.nanoTime();
            if (!"ok".equals(answer)) {
                throw new IllegalStateException(key + ": the stub answered " + answer);
            }
            return t1 - t0;
        }
    }

    record AdvisorResult(List<AdvisorContender> contenders, int warmup, int rounds, int perRound,
            WriteBehindFigures writeBehindFigures, long writerCalls, long writerTexts) {}

    /**
     * {@code warmup} requests per contender, then {@code rounds} rounds of {@code perRound} requests
     * per contender, the order rotated each round, requests back to back on one thread; the
     * write-behind store is flushed after each of its runs (not timed into any request).
     */
    static AdvisorResult advisor(int warmup, int rounds, int perRound) {
        MiniLm m = model();
        ChatModel chatModel = new FixedAnswer();
        Timed syncStore = new Timed(simpleStore());
        WriteBehindVectorStore wb = writeBehind(simpleStore(), "bench-advisor");
        Timed wbStore = new Timed(wb);
        List<AdvisorContender> contenders = List.of(
                new AdvisorContender("none", "no advisor", ChatClient.builder(chatModel).build(), null, null),
                new AdvisorContender("sync", "VectorStoreChatMemoryAdvisor over SimpleVectorStore",
                        ChatClient.builder(chatModel).defaultAdvisors(VectorStoreChatMemoryAdvisor.builder(syncStore)
                                .build()).build(), syncStore, null),
                new AdvisorContender("writebehind", "VectorStoreChatMemoryAdvisor over WriteBehindVectorStore over "
                        + "SimpleVectorStore", ChatClient.builder(chatModel).defaultAdvisors(
                                VectorStoreChatMemoryAdvisor.builder(wbStore).build()).build(), wbStore, wb));
        List<String> texts = texts(warmup + rounds * perRound, 7);
        try {
            for (AdvisorContender c : contenders) {
                for (int i = 0; i < warmup; i++) {
                    c.request(texts.get(i));
                }
                if (c.writeBehind != null) {
                    flush(c.writeBehind);
                }
            }
            m.resetCounts();
            for (int r = 0; r < rounds; r++) {
                StringBuilder line = new StringBuilder("  round " + (r + 1) + ":");
                for (int k = 0; k < contenders.size(); k++) {
                    AdvisorContender c = contenders.get((k + r) % contenders.size());
                    if (c.timed != null) {
                        c.timed.recording = true;
                    }
                    Samples round = new Samples();
                    for (int i = 0; i < perRound; i++) {
                        long nanos = c.request(texts.get(warmup + r * perRound + i));
                        c.requests.add(nanos);
                        round.add(nanos);
                    }
                    if (c.timed != null) {
                        c.timed.recording = false;
                    }
                    line.append(String.format(" %s %s;", c.key, round.percentiles().micros()));
                    if (c.writeBehind != null) {
                        int pending = c.writeBehind.figures().pending();
                        long t0 = System.nanoTime();
                        flush(c.writeBehind);
                        double seconds = (System.nanoTime() - t0) / 1e9;
                        c.flushes.add(BenchMain.entry("pendingAtEndOfRound", pending, "flushSeconds", seconds));
                        line.append(String.format(" (%d documents still waiting at the end, flushed in %.2f s)", pending,
                                seconds));
                    }
                }
                System.out.println(line);
            }
            WriteBehindFigures figures = wb.figures();
            return new AdvisorResult(contenders, warmup, rounds, perRound, figures, m.writerCalls.get(),
                    m.writerTexts.get());
        } finally {
            wb.stop(FLUSH);
        }
    }

    // ---- 1b. the add alone ---------------------------------------------------------------------

    record AddResult(Map<String, Percentiles> byContender, int warmup, int rounds, int perRound,
            List<Map<String, Object>> flushes, long writerCalls, long writerTexts) {}

    /**
     * One document per call on the caller's thread, paced one call every {@link #ADD_PACE_NANOS}
     * at most (parking until the next slot; a call that overruns it starts the next at once):
     * {@code embed} (the model's call for one text), {@code sync} ({@code SimpleVectorStore.add}),
     * {@code writebehind} ({@code WriteBehindVectorStore.add}, its writer embedding meanwhile; flushed
     * after each run, not timed into any add).
     */
    static AddResult addAlone(int warmup, int rounds, int perRound) {
        MiniLm m = model();
        SimpleVectorStore sync = simpleStore();
        WriteBehindVectorStore wb = writeBehind(simpleStore(), "bench-add");
        List<String> keys = List.of("embed", "sync", "writebehind");
        Map<String, Samples> samples = new LinkedHashMap<>();
        keys.forEach(k -> samples.put(k, new Samples()));
        List<String> texts = texts(warmup + rounds * perRound, 11);
        List<Map<String, Object>> flushes = new ArrayList<>();
        try {
            for (String k : keys) {
                addRun(k, texts.subList(0, warmup), sync, wb, m, null);
                flush(wb);
            }
            m.resetCounts();
            for (int r = 0; r < rounds; r++) {
                StringBuilder line = new StringBuilder("  round " + (r + 1) + ":");
                for (int i = 0; i < keys.size(); i++) {
                    String k = keys.get((i + r) % keys.size());
                    Samples round = new Samples();
                    addRun(k, texts.subList(warmup + r * perRound, warmup + (r + 1) * perRound), sync, wb, m, round);
                    samples.get(k).addAll(round);
                    line.append(String.format(" %s %s;", k, round.percentiles().micros()));
                    if (k.equals("writebehind")) {
                        int pending = wb.figures().pending();
                        long t0 = System.nanoTime();
                        flush(wb);
                        double seconds = (System.nanoTime() - t0) / 1e9;
                        flushes.add(BenchMain.entry("pendingAtEndOfRound", pending, "flushSeconds", seconds));
                        line.append(String.format(" (%d waiting at the end, flushed in %.2f s)", pending, seconds));
                    }
                }
                System.out.println(line);
            }
            Map<String, Percentiles> out = new LinkedHashMap<>();
            samples.forEach((k, s) -> out.put(k, s.percentiles()));
            return new AddResult(out, warmup, rounds, perRound, flushes, m.writerCalls.get(), m.writerTexts.get());
        } finally {
            wb.stop(FLUSH);
        }
    }

    private static void addRun(String key, List<String> texts, VectorStore sync, WriteBehindVectorStore wb, MiniLm m,
            Samples into) {
        long next = System.nanoTime();
        for (String text : texts) {
            long now = System.nanoTime();
            if (now < next) {
                LockSupport.parkNanos(next - now);
            }
            Document doc = Document.builder().text(text).metadata("conversationId", "bench-add")
                    .metadata("messageType", "USER").build();
            List<Document> one = List.of(doc);
            long t0 = System.nanoTime();
            switch (key) {
                case "embed" -> m.embed(text);
                case "sync" -> sync.add(one);
                case "writebehind" -> wb.add(one);
                default -> throw new IllegalArgumentException(key);
            }
            long t1 = System.nanoTime();
            if (into != null) {
                into.add(t1 - t0);
            }
            next = Math.max(t0 + ADD_PACE_NANOS, t1);
        }
    }

    // ---- 2. embedding throughput ---------------------------------------------------------------

    /** Rates pooled over the rounds, per round, and the texts per model call of each write-behind contender's writer. */
    record ThroughputResult(int texts, int rounds, Map<String, Double> textsPerSecond,
            Map<String, List<Double>> perRound, Map<String, Double> writerTextsPerCall, Map<String, Double> coresBusy) {}

    /**
     * On LangChain4j's model ({@link MiniLm}, one ONNX run per text): perText, syncAdd, memlife (over
     * SimpleVectorStore), memlifeBatchingStore, rawBatch. On {@link BatchedMiniLm} (the same weights,
     * one ONNX run per call for all its texts): batchedPerText, batchedMemlife (over a store embedding
     * each add in one call), batchedRawBatch.
     */
    static final List<String> THROUGHPUT_KEYS = List.of("perText", "syncAdd", "memlife", "memlifeBatchingStore",
            "rawBatch", "batchedPerText", "batchedMemlife", "batchedRawBatch");

    /** Texts of the equivalence check: short, long, and a batch of mixed lengths padded to the longest. */
    static final List<String> EQUIVALENCE_TEXTS = List.of("hi", "My sister moved the dentist appointment to next "
            + "Tuesday, note 3.", "The quarterly report is late again because Tom from accounting keeps asking about "
            + "the insurance claim and the tax return, and nobody knows when the budget review will finally happen.",
            "Grandpa wants to discuss the piano lessons.", "Ünïcödé and emoji 🙂 survive tokenization?");
    static final double EQUIVALENCE_MIN_COSINE = 0.999;

    private static BatchedMiniLm batched;
    private static double batchedLoadSeconds;
    private static double batchedMinCosineSingle;
    private static double batchedMinCosineInBatch;

    /**
     * The batched model, loaded on first use and checked against LangChain4j's model: for each of
     * {@link #EQUIVALENCE_TEXTS}, embedded alone and inside one padded batch of all of them, the
     * cosine similarity to LangChain4j's vector must exceed {@value #EQUIVALENCE_MIN_COSINE}; fails
     * otherwise.
     */
    static synchronized BatchedMiniLm batchedModel() {
        if (batched == null) {
            MiniLm reference = model();
            long t0 = System.nanoTime();
            BatchedMiniLm b = new BatchedMiniLm();
            b.embed("warming up the ONNX session");
            batchedLoadSeconds = (System.nanoTime() - t0) / 1e9;
            List<float[]> inBatch = b.embed(EQUIVALENCE_TEXTS);
            double minSingle = 1;
            double minBatch = 1;
            for (int i = 0; i < EQUIVALENCE_TEXTS.size(); i++) {
                float[] expected = reference.embed(EQUIVALENCE_TEXTS.get(i));
                minSingle = Math.min(minSingle, BatchedMiniLm.cosine(b.embed(EQUIVALENCE_TEXTS.get(i)), expected));
                minBatch = Math.min(minBatch, BatchedMiniLm.cosine(inBatch.get(i), expected));
            }
            batchedMinCosineSingle = minSingle;
            batchedMinCosineInBatch = minBatch;
            System.out.printf("  all-MiniLM-L6-v2 with batched inference loaded in %.1f s (%s); cosine to LangChain4j's "
                    + "vectors over %d texts: min %.6f alone, %.6f in one padded batch%n", batchedLoadSeconds,
                    b.describeSession(), EQUIVALENCE_TEXTS.size(), minSingle, minBatch);
            if (!(minSingle > EQUIVALENCE_MIN_COSINE) || !(minBatch > EQUIVALENCE_MIN_COSINE)) {
                throw new IllegalStateException("the batched all-MiniLM-L6-v2 does not match LangChain4j's: min cosine "
                        + minSingle + " alone, " + minBatch + " in a batch, need > " + EQUIVALENCE_MIN_COSINE);
            }
            batched = b;
        }
        return batched;
    }

    static double batchedLoadSeconds() {
        return batchedLoadSeconds;
    }

    static double batchedMinCosineSingle() {
        return batchedMinCosineSingle;
    }

    static double batchedMinCosineInBatch() {
        return batchedMinCosineInBatch;
    }

    /**
     * {@code n} texts per run, {@code rounds} rounds, each contender once per round, the order rotated;
     * after one warm-up run of each over 64 texts. Rates pooled over the rounds (all texts over all
     * time).
     */
    static ThroughputResult throughput(int n, int rounds) {
        MiniLm m = model();
        BatchedMiniLm bm = batchedModel();
        List<String> texts = texts(n, 23);
        for (String k : THROUGHPUT_KEYS) {
            throughputRun(k, texts.subList(0, BATCH), m, bm, "warm-up");
        }
        Map<String, Double> nanos = new LinkedHashMap<>();
        Map<String, Double> cpu = new LinkedHashMap<>();
        Map<String, long[]> writer = new LinkedHashMap<>();
        Map<String, List<Double>> perRound = new LinkedHashMap<>();
        THROUGHPUT_KEYS.forEach(k -> {
            nanos.put(k, 0.0);
            perRound.put(k, new ArrayList<>());
        });
        for (int r = 0; r < rounds; r++) {
            StringBuilder line = new StringBuilder("  round " + (r + 1) + ":");
            for (int i = 0; i < THROUGHPUT_KEYS.size(); i++) {
                String k = THROUGHPUT_KEYS.get((i + r) % THROUGHPUT_KEYS.size());
                m.resetCounts();
                bm.resetCounts();
                long cpu0 = processCpuNanos();
                long t = throughputRun(k, texts, m, bm, "round" + r);
                cpu.merge(k, (double) (processCpuNanos() - cpu0), Double::sum);
                long[] w = writer.computeIfAbsent(k, x -> new long[2]);
                w[0] += m.writerCalls.get() + bm.writerCalls.get();
                w[1] += m.writerTexts.get() + bm.writerTexts.get();
                nanos.put(k, nanos.get(k) + t);
                double rate = n / (t / 1e9);
                perRound.get(k).add(rate);
                line.append(String.format(" %s %,.0f texts/s;", k, rate));
            }
            System.out.println(line);
        }
        Map<String, Double> rates = new LinkedHashMap<>();
        nanos.forEach((k, t) -> rates.put(k, (double) rounds * n / (t / 1e9)));
        Map<String, Double> perCall = new LinkedHashMap<>();
        writer.forEach((k, w) -> {
            if (w[0] > 0) {
                perCall.put(k, (double) w[1] / w[0]);
            }
        });
        Map<String, Double> cores = new LinkedHashMap<>();
        nanos.forEach((k, t) -> cores.put(k, cpu.get(k) / t));
        return new ThroughputResult(n, rounds, rates, perRound, perCall, cores);
    }

    /** {@return the CPU time of every thread of this process so far (ONNX Runtime's native ones too), or 0} */
    private static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean sun ? Math.max(0, sun.getProcessCpuTime()) : 0;
    }

    /** {@return the nanoseconds one contender took to embed {@code texts}} */
    private static long throughputRun(String key, List<String> texts, MiniLm m, BatchedMiniLm bm, String tag) {
        switch (key) {
            case "perText":
                return perText(m, texts);
            case "batchedPerText":
                return perText(bm, texts);
            case "syncAdd": {
                SimpleVectorStore store = simpleStore();
                List<Document> docs = docs(texts);
                long t0 = System.nanoTime();
                for (Document d : docs) {
                    store.add(List.of(d));
                }
                return System.nanoTime() - t0;
            }
            case "memlife":
                return writeBehindRun(key, simpleStore(), texts, tag);
            case "memlifeBatchingStore":
                return writeBehindRun(key, new BatchEmbeddingStore(m), texts, tag);
            case "batchedMemlife":
                return writeBehindRun(key, new BatchEmbeddingStore(bm), texts, tag);
            case "rawBatch":
                return rawBatch(m, texts);
            case "batchedRawBatch":
                return rawBatch(bm, texts);
            default:
                throw new IllegalArgumentException(key);
        }
    }

    private static long perText(EmbeddingModel model, List<String> texts) {
        long t0 = System.nanoTime();
        for (String t : texts) {
            model.embed(t);
        }
        return System.nanoTime() - t0;
    }

    private static long rawBatch(EmbeddingModel model, List<String> texts) {
        long t0 = System.nanoTime();
        for (int i = 0; i < texts.size(); i += BATCH) {
            model.embed(texts.subList(i, Math.min(texts.size(), i + BATCH)));
        }
        return System.nanoTime() - t0;
    }

    /** Every text added one by one to a write-behind store over {@code behind}, timed from the first add until flush returns. */
    private static long writeBehindRun(String key, VectorStore behind, List<String> texts, String tag) {
        WriteBehindVectorStore wb = writeBehind(behind, "bench-" + key + "-" + tag);
        List<Document> docs = docs(texts);
        try {
            long t0 = System.nanoTime();
            for (Document d : docs) {
                wb.add(List.of(d));
            }
            flush(wb);
            long t = System.nanoTime() - t0;
            if (wb.figures().writtenSaves() != texts.size()) {
                throw new IllegalStateException(wb + ": wrote " + wb.figures().writtenSaves() + " of " + texts.size());
            }
            return t;
        } finally {
            wb.stop(FLUSH);
        }
    }

    /**
     * A store that embeds each add in one call of its model, as most of Spring AI's stores do
     * (Redis, MariaDB, Elasticsearch, OpenSearch, Couchbase, Typesense...: {@code
     * embeddingModel.embed(documents, options, batchingStrategy)}), keeping the vectors in a map;
     * {@code SimpleVectorStore} 1.1 embeds one document per call instead. For the throughput only: it
     * cannot search.
     */
    static final class BatchEmbeddingStore implements VectorStore {
        private final EmbeddingModel model;
        private final BatchingStrategy batching = new TokenCountBatchingStrategy();
        private final Map<String, float[]> vectors = new ConcurrentHashMap<>();

        BatchEmbeddingStore(EmbeddingModel model) {
            this.model = model;
        }

        @Override
        public void add(List<Document> documents) {
            List<float[]> embedded = model.embed(documents, EmbeddingOptions.builder().build(), batching);
            for (int i = 0; i < documents.size(); i++) {
                vectors.put(documents.get(i).getId(), embedded.get(i));
            }
        }

        @Override
        public void delete(List<String> idList) {
            idList.forEach(vectors::remove);
        }

        @Override
        public void delete(Filter.Expression filterExpression) {
            throw new UnsupportedOperationException("the benchmark's batch-embedding store cannot filter");
        }

        @Override
        public List<Document> similaritySearch(SearchRequest request) {
            throw new UnsupportedOperationException("the benchmark's batch-embedding store cannot search");
        }
    }

    private static List<Document> docs(List<String> texts) {
        List<Document> docs = new ArrayList<>(texts.size());
        texts.forEach(t -> docs.add(Document.builder().text(t).build()));
        return docs;
    }
}
