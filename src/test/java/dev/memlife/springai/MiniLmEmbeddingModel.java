package dev.memlife.springai;

import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.onnx.allminilml6v2.AllMiniLmL6V2EmbeddingModel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.ai.document.Document;
import org.springframework.ai.embedding.Embedding;
import org.springframework.ai.embedding.EmbeddingModel;
import org.springframework.ai.embedding.EmbeddingRequest;
import org.springframework.ai.embedding.EmbeddingResponse;

/**
 * A real embedding model for Spring AI's tests: all-MiniLM-L6-v2 on ONNX, in process (LangChain4j's
 * packaging of it, whose weights ship inside its jar; Spring AI's own transformer model would
 * download them). Records every call: the calling thread and how many texts it embedded, so a test
 * can say where embedding ran.
 */
public final class MiniLmEmbeddingModel implements EmbeddingModel {

    /** One call: on which thread, how many texts. */
    public record Call(String thread, int texts) {}

    private static final AllMiniLmL6V2EmbeddingModel MODEL = new AllMiniLmL6V2EmbeddingModel();

    private final List<Call> calls = new CopyOnWriteArrayList<>();

    @Override
    public EmbeddingResponse call(EmbeddingRequest request) {
        List<String> texts = request.getInstructions();
        calls.add(new Call(Thread.currentThread().getName(), texts.size()));
        List<TextSegment> segments = new ArrayList<>(texts.size());
        texts.forEach(t -> segments.add(TextSegment.from(t)));
        List<dev.langchain4j.data.embedding.Embedding> vectors = MODEL.embedAll(segments).content();
        List<Embedding> out = new ArrayList<>(vectors.size());
        for (int i = 0; i < vectors.size(); i++) {
            out.add(new Embedding(vectors.get(i).vector(), i));
        }
        return new EmbeddingResponse(out);
    }

    @Override
    public float[] embed(Document document) {
        return embed(document.getText());
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
}
