package dev.memlife.langchain4j;

import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.output.Response;
import dev.langchain4j.store.embedding.EmbeddingStore;
import dev.memlife.internal.Attempts;
import java.util.ArrayList;
import java.util.List;

/**
 * One batch written as {@link WriteBehindEmbeddingIngestor} and {@link SemanticMemoryProvider} write
 * theirs: embedded in one {@link EmbeddingModel#embedAll} call, added in one {@link
 * EmbeddingStore#addAll(List, List, List)} call, the two tried again together under {@code
 * attempts}, the embeddings kept when only the store failed.
 */
final class BatchEmbedding {

    private BatchEmbedding() {}

    /**
     * Embeds and stores {@code segments} under {@code ids}.
     *
     * @param what what a segment is, for the error ("turns", "segments")
     * @param onEmbed called before each call to the model, for the caller's figures
     * @throws IllegalStateException if the model returned another number of embeddings than texts
     * @throws RuntimeException what the model or the store threw first, once every attempt failed
     */
    static void write(EmbeddingModel model, EmbeddingStore<TextSegment> store, Attempts attempts, List<String> ids,
            List<TextSegment> segments, String what, Runnable onEmbed) {
        List<List<Embedding>> embedded = new ArrayList<>(1); // kept when the store fails after the model
        attempts.run(() -> {
            if (embedded.isEmpty()) {
                onEmbed.run();
                Response<List<Embedding>> response = model.embedAll(segments);
                List<Embedding> embeddings = response == null ? null : response.content();
                int got = embeddings == null ? 0 : embeddings.size();
                if (got != segments.size()) {
                    throw new IllegalStateException("the embedding model returned " + got + " embeddings for "
                            + segments.size() + " " + what);
                }
                embedded.add(embeddings);
            }
            store.addAll(ids, embedded.get(0), segments);
        });
    }
}
