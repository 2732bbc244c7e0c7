package dev.memlife.langchain4j;

import dev.memlife.faults.CallGate;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.store.embedding.EmbeddingMatch;
import dev.langchain4j.store.embedding.EmbeddingSearchRequest;
import dev.langchain4j.store.embedding.EmbeddingSearchResult;
import dev.langchain4j.store.embedding.EmbeddingStore;
import dev.langchain4j.store.embedding.inmemory.InMemoryEmbeddingStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An embedding store the test controls, over a real {@link InMemoryEmbeddingStore}: it records every
 * {@code addAll} and {@code removeAll} (the ids in order, the texts, the thread), and holds {@code
 * addAll} at its start while {@link #hold() held}.
 */
final class HeldEmbeddingStore implements EmbeddingStore<TextSegment> {

    /** One call: "add" or "remove", its ids in order, the texts of an add, the calling thread. */
    record Call(String kind, List<String> ids, List<String> texts, String thread) {}

    private final InMemoryEmbeddingStore<TextSegment> behind = new InMemoryEmbeddingStore<>();
    private final List<Call> calls = new CopyOnWriteArrayList<>();
    private final CallGate gate = new CallGate();

    /** Holds every later {@code addAll} at its start until {@link #open()}. */
    void hold() {
        gate.hold();
    }

    /** Lets the held calls, and every later one, through. */
    void open() {
        gate.open();
    }

    /** Waits until a call has entered {@code addAll} (held or not) since the last wait. */
    boolean awaitEntered(Duration within) throws InterruptedException {
        return gate.awaitEntered(within);
    }

    @Override
    public void addAll(List<String> ids, List<Embedding> embeddings, List<TextSegment> embedded) {
        gate.pass();
        List<String> texts = new ArrayList<>();
        embedded.forEach(s -> texts.add(s.text()));
        calls.add(new Call("add", List.copyOf(ids), texts, Thread.currentThread().getName()));
        behind.addAll(ids, embeddings, embedded);
    }

    @Override
    public void removeAll(Collection<String> ids) {
        calls.add(new Call("remove", List.copyOf(ids), List.of(), Thread.currentThread().getName()));
        behind.removeAll(ids);
    }

    @Override
    public String add(Embedding embedding) {
        throw new UnsupportedOperationException("the write-behind ingestor adds with ids");
    }

    @Override
    public void add(String id, Embedding embedding) {
        throw new UnsupportedOperationException("the write-behind ingestor adds with ids");
    }

    @Override
    public String add(Embedding embedding, TextSegment embedded) {
        throw new UnsupportedOperationException("the write-behind ingestor adds with ids");
    }

    @Override
    public List<String> addAll(List<Embedding> embeddings) {
        throw new UnsupportedOperationException("the write-behind ingestor adds with ids");
    }

    @Override
    public EmbeddingSearchResult<TextSegment> search(EmbeddingSearchRequest request) {
        return behind.search(request);
    }

    /** {@return every call that got past the gate, oldest first} */
    List<Call> calls() {
        return List.copyOf(calls);
    }

    /** {@return the ids of every add that got past the gate, in order} */
    List<String> addedIds() {
        List<String> ids = new ArrayList<>();
        calls.stream().filter(c -> c.kind().equals("add")).forEach(c -> ids.addAll(c.ids()));
        return ids;
    }

    /** {@return how many segments the store behind holds} */
    int size() {
        return behind.size();
    }

    /** {@return every segment in {@code store}, by id: a search that matches all of them} */
    static Map<String, TextSegment> contents(EmbeddingStore<TextSegment> store, Embedding anyQuery) {
        Map<String, TextSegment> byId = new LinkedHashMap<>();
        for (EmbeddingMatch<TextSegment> m : store.search(EmbeddingSearchRequest.builder().queryEmbedding(anyQuery)
                .maxResults(1_000).minScore(0.0).build()).matches()) {
            byId.put(m.embeddingId(), m.embedded());
        }
        return byId;
    }
}
