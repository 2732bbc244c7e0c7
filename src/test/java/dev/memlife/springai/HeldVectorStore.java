package dev.memlife.springai;

import dev.memlife.faults.CallGate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.ai.document.Document;
import org.springframework.ai.vectorstore.SearchRequest;
import org.springframework.ai.vectorstore.VectorStore;
import org.springframework.ai.vectorstore.filter.Filter;

/**
 * A vector store the test controls, over another (a real {@code SimpleVectorStore}, or none): it
 * records every call it gets (which ids each add and delete carried, on which thread), holds the
 * writer inside {@code add} while {@link #hold() held}, and fails the next calls it is told to.
 */
final class HeldVectorStore implements VectorStore {

    /** One call: add or delete, its ids in order, the calling thread. */
    record Call(String kind, List<String> ids, String thread) {}

    private final VectorStore behind;
    private final List<Call> calls = new CopyOnWriteArrayList<>();
    private final List<Document> received = new CopyOnWriteArrayList<>();
    private final CallGate gate = new CallGate();

    /** @param behind where the calls go once let through; null to keep only the record */
    HeldVectorStore(VectorStore behind) {
        this.behind = behind;
    }

    /** Holds every later add at its start until {@link #open()}. */
    void hold() {
        gate.hold();
    }

    /** Lets the held adds, and every later one, through. */
    void open() {
        gate.open();
    }

    /** The next {@code n} adds and deletes throw. */
    void failNext(int n) {
        gate.failNext(n);
    }

    /** Waits until a call has entered {@code add} (held or not) since the last wait. */
    boolean awaitEntered(Duration within) throws InterruptedException {
        return gate.awaitEntered(within);
    }

    @Override
    public void add(List<Document> documents) {
        List<String> ids = new ArrayList<>();
        documents.forEach(d -> ids.add(d.getId()));
        gate.pass();
        calls.add(new Call("add", ids, Thread.currentThread().getName()));
        if (gate.failsNow()) {
            throw new IllegalStateException("test: the vector store is down for " + ids);
        }
        received.addAll(documents);
        if (behind != null) {
            behind.add(documents);
        }
    }

    @Override
    public void delete(List<String> idList) {
        calls.add(new Call("delete", List.copyOf(idList), Thread.currentThread().getName()));
        if (gate.failsNow()) {
            throw new IllegalStateException("test: the vector store is down for " + idList);
        }
        if (behind != null) {
            behind.delete(idList);
        }
    }

    @Override
    public void delete(Filter.Expression filterExpression) {
        calls.add(new Call("deleteByFilter", List.of(), Thread.currentThread().getName()));
        if (behind != null) {
            behind.delete(filterExpression);
        }
    }

    @Override
    public List<Document> similaritySearch(SearchRequest request) {
        return behind == null ? List.of() : behind.similaritySearch(request);
    }

    /** {@return every call that got past the gate, oldest first} */
    List<Call> calls() {
        return List.copyOf(calls);
    }

    /** {@return every document an add that succeeded carried, in order} */
    List<Document> received() {
        return List.copyOf(received);
    }

    /** {@return the ids of every add that got past the gate, in order, the failed ones included} */
    List<String> addedIds() {
        List<String> ids = new ArrayList<>();
        calls.stream().filter(c -> c.kind().equals("add")).forEach(c -> ids.addAll(c.ids()));
        return ids;
    }
}
