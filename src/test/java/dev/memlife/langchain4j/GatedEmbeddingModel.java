package dev.memlife.langchain4j;

import dev.memlife.faults.CallGate;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.output.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A real embedding model (all-MiniLM-L6-v2, passed in) the test controls: it records every {@code
 * embedAll} call (its texts, its thread) and every query embedding, holds {@code embedAll} at its
 * start while {@link #hold() held}, fails the next calls it is told to, and can return one
 * embedding too few.
 */
final class GatedEmbeddingModel implements EmbeddingModel {

    /** One {@code embedAll} call: the texts in order, the calling thread. */
    record Call(List<String> texts, String thread) {}

    private final EmbeddingModel real;
    private final List<Call> calls = new CopyOnWriteArrayList<>();
    private final List<String> queryThreads = new CopyOnWriteArrayList<>();
    private final CallGate gate = new CallGate();
    private volatile boolean short1;

    GatedEmbeddingModel(EmbeddingModel real) {
        this.real = real;
    }

    /** Holds every later {@code embedAll} at its start until {@link #open()}. */
    void hold() {
        gate.hold();
    }

    /** Lets the held calls, and every later one, through. */
    void open() {
        gate.open();
    }

    /** The next {@code n} {@code embedAll} calls throw. */
    void failNext(int n) {
        gate.failNext(n);
    }

    /** From now on {@code embedAll} returns one embedding fewer than it was given texts. */
    void returnOneTooFew() {
        short1 = true;
    }

    /** Waits until a call has entered {@code embedAll} (held or not) since the last wait. */
    boolean awaitEntered(Duration within) throws InterruptedException {
        return gate.awaitEntered(within);
    }

    @Override
    public Response<List<Embedding>> embedAll(List<TextSegment> segments) {
        List<String> texts = new ArrayList<>(segments.size());
        segments.forEach(s -> texts.add(s.text()));
        gate.pass();
        calls.add(new Call(List.copyOf(texts), Thread.currentThread().getName()));
        if (gate.failsNow()) {
            throw new IllegalStateException("test: the embedding model is down for " + texts);
        }
        List<Embedding> embeddings = real.embedAll(segments).content();
        return Response.from(short1 ? embeddings.subList(0, embeddings.size() - 1) : embeddings);
    }

    @Override
    public Response<Embedding> embed(String text) {
        queryThreads.add(Thread.currentThread().getName());
        return real.embed(text);
    }

    @Override
    public Response<Embedding> embed(TextSegment segment) {
        return embed(segment.text());
    }

    @Override
    public int dimension() {
        return real.dimension();
    }

    /** {@return every {@code embedAll} call that got past the gate, oldest first, the failed ones included} */
    List<Call> calls() {
        return List.copyOf(calls);
    }

    /** {@return how many texts each {@code embedAll} call that got past the gate carried, in order} */
    List<Integer> batchSizes() {
        return calls.stream().map(c -> c.texts().size()).toList();
    }

    /** {@return the threads of the query embeddings ({@code embed(String)}) so far} */
    List<String> queryThreads() {
        return List.copyOf(queryThreads);
    }
}
