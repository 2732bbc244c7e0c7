package dev.memlife.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.springai.WriteBehindVectorStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.ai.document.Document;
import org.springframework.ai.vectorstore.SearchRequest;
import org.springframework.ai.vectorstore.VectorStore;
import org.springframework.ai.vectorstore.filter.Filter;

/** The starter's memlife.vector-store.* door: the application's VectorStore beans written behind. */
@Timeout(60)
class WriteBehindVectorStoresTest {

    /** A vector store that keeps what it is given and records, in one list, its adds and its close. */
    static final class RecordingStore implements VectorStore, AutoCloseable {
        final List<String> events = new CopyOnWriteArrayList<>();

        @Override
        public void add(List<Document> documents) {
            documents.forEach(d -> events.add("add " + d.getId() + " on " + Thread.currentThread().getName()));
        }

        @Override
        public void delete(List<String> idList) {
            events.add("delete " + idList);
        }

        @Override
        public void delete(Filter.Expression filterExpression) {
            events.add("delete by filter");
        }

        @Override
        public List<Document> similaritySearch(SearchRequest request) {
            return List.of();
        }

        @Override
        public void close() {
            events.add("close");
        }
    }

    @Test
    void withWriteBehindOnEveryVectorStoreBeanIsWrappedAndDrainedBeforeTheStoreBehindCloses() {
        RecordingStore behind = new RecordingStore();
        StarterContexts.runner().withBean("longTerm", VectorStore.class, () -> behind)
                .withPropertyValues("memlife.vector-store.write-behind=true", "memlife.gateway.enabled=false")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    VectorStore bean = context.getBean(VectorStore.class);
                    assertThat(bean).isInstanceOf(WriteBehindVectorStore.class);
                    assertThat(((WriteBehindVectorStore) bean).name()).isEqualTo("longTerm");
                    assertThat(WriteBehindBeans.find(context.getBeanFactory())).extracting(WriteBehindBeans.Found::name)
                            .as("health, meters and the start-up line see it").containsExactly("longTerm");
                    bean.add(List.of(new Document("a", "first", java.util.Map.of()),
                            new Document("b", "second", java.util.Map.of())));
                });

        assertThat(behind.events).containsExactly("add a on memlife-vector-writer-longTerm",
                "add b on memlife-vector-writer-longTerm", "close");
    }

    @Test
    void withoutTheSwitchTheBeanIsLeftAsItIs() {
        RecordingStore behind = new RecordingStore();
        StarterContexts.runner().withBean("longTerm", VectorStore.class, () -> behind)
                .withPropertyValues("memlife.gateway.enabled=false")
                .run(context -> assertThat(context.getBean(VectorStore.class)).isSameAs(behind));
    }

    @Test
    void aSpoolDirectoryGivesEachWrappedStoreASpoolNamedAfterItsBean(@TempDir Path dir) {
        RecordingStore behind = new RecordingStore();
        StarterContexts.runner().withBean("longTerm", VectorStore.class, () -> behind)
                .withPropertyValues("memlife.vector-store.write-behind=true", "memlife.gateway.enabled=false",
                        "memlife.vector-store.spool-dir=" + dir, "memlife.vector-store.batch-size=8")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    context.getBean(VectorStore.class).add(List.of(new Document("a", "first", java.util.Map.of())));
                    assertThat(Files.isDirectory(dir.resolve("longTerm"))).isTrue();
                });
        assertThat(behind.events).startsWith("add a on memlife-vector-writer-longTerm");
    }
}
