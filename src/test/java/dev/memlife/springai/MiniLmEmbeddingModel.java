package dev.memlife.springai;

import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.onnx.allminilml6v2.AllMiniLmL6V2EmbeddingModel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.ai.document.Document;
import org.springframework.ai.embedding.BatchingStrategy;
import org.springframework.ai.embedding.Embedding;
import org.springframework.ai.embedding.EmbeddingModel;
import org.springframework.ai.embedding.EmbeddingOptions;
import org.springframework.ai.embedding.EmbeddingRequest;
import org.springframework.ai.embedding.EmbeddingResponse;

/**
 * A real embedding model for Spring AI's tests: all-MiniLM-L6-v2 on ONNX, in process (LangChain4j's
 * packaging of it, whose weights ship inside its jar; Spring AI's own transformer model would
 * download them). Records every call: the calling thread and how many texts it embedded, so a test
 * can say where embedding ran.
 */
public final class MiniLmEmbeddingModel implements EmbeddingModel {

    /** One call: on which thread, how many texts, and whether a search's query or documents being stored. */
    public record Call(String thread, int texts, Kind kind) {}

    /** What a call embedded. */
    public enum Kind {
        /** A search's query ({@code embed(String)}, as {@code SimpleVectorStore}'s search calls it). */
        QUERY,
        /** Documents being stored ({@code embed(List<Document>, ...)}, as {@code SimpleVectorStore}'s add calls it). */
        DOCUMENTS,
        /** Texts through {@link #call} directly. */
        TEXTS
    }

    /** The model, loaded on first use (not by the static helpers the benchmark calls). */
    private static final class Loaded {
        static final AllMiniLmL6V2EmbeddingModel MODEL = new AllMiniLmL6V2EmbeddingModel();
    }

    private final List<Call> calls = new CopyOnWriteArrayList<>();

    @Override
    public EmbeddingResponse call(EmbeddingRequest request) {
        calls.add(new Call(Thread.currentThread().getName(), request.getInstructions().size(), Kind.TEXTS));
        return embedAll(request.getInstructions());
    }

    @Override
    public float[] embed(String text) {
        calls.add(new Call(Thread.currentThread().getName(), 1, Kind.QUERY));
        return embedAll(List.of(text)).getResults().get(0).getOutput();
    }

    @Override
    public List<float[]> embed(List<Document> documents, EmbeddingOptions options, BatchingStrategy batching) {
        calls.add(new Call(Thread.currentThread().getName(), documents.size(), Kind.DOCUMENTS));
        List<String> texts = new ArrayList<>(documents.size());
        documents.forEach(d -> texts.add(d.getText()));
        List<float[]> vectors = new ArrayList<>(documents.size());
        embedAll(texts).getResults().forEach(e -> vectors.add(e.getOutput()));
        return vectors;
    }

    private static EmbeddingResponse embedAll(List<String> texts) {
        return embedAll(Loaded.MODEL, texts);
    }

    /**
     * {@code texts} embedded by a LangChain4j model, as Spring AI's response: the one conversion
     * between the two, shared with the benchmark's models.
     *
     * @param model the LangChain4j model
     * @param texts the texts
     * @return their embeddings, indexed in order
     */
    public static EmbeddingResponse embedAll(dev.langchain4j.model.embedding.EmbeddingModel model, List<String> texts) {
        List<TextSegment> segments = new ArrayList<>(texts.size());
        texts.forEach(t -> segments.add(TextSegment.from(t)));
        List<float[]> vectors = new ArrayList<>(texts.size());
        model.embedAll(segments).content().forEach(e -> vectors.add(e.vector()));
        return response(vectors);
    }

    /**
     * {@code vectors} as Spring AI's response, each indexed by its place.
     *
     * @param vectors the embeddings, in order
     * @return the response
     */
    public static EmbeddingResponse response(List<float[]> vectors) {
        List<Embedding> out = new ArrayList<>(vectors.size());
        for (int i = 0; i < vectors.size(); i++) {
            out.add(new Embedding(vectors.get(i), i));
        }
        return new EmbeddingResponse(out);
    }

    @Override
    public float[] embed(Document document) {
        return embed(List.of(document), null, null).get(0);
    }

    @Override
    public int dimensions() {
        return 384;
    }

    /** {@return every call so far, oldest first} */
    public List<Call> calls() {
        return List.copyOf(calls);
    }

    /** {@return the names of the threads that have called the model so far} */
    public List<String> threads() {
        return calls.stream().map(Call::thread).distinct().toList();
    }

    /** {@return the calls so far that embedded {@code kind}} */
    public List<Call> calls(Kind kind) {
        return calls.stream().filter(c -> c.kind() == kind).toList();
    }
}
