package dev.memlife.springai;

import dev.memlife.WriteBehindReport;
import dev.memlife.spool.ChildOutput;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.vectorstore.VectorStoreChatMemoryAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.document.Document;
import org.springframework.ai.vectorstore.SearchRequest;
import org.springframework.ai.vectorstore.SimpleVectorStore;
import org.springframework.ai.vectorstore.VectorStore;
import org.springframework.ai.vectorstore.filter.Filter;

/**
 * A chat service in a child JVM for {@link VectorMemoryProcessTest}: a real {@link ChatClient} with
 * {@link VectorStoreChatMemoryAdvisor} over a {@link WriteBehindVectorStore}, over a {@link
 * SimpleVectorStore} on the real MiniLM model that saves itself to a file after every write (a
 * durable vector store, as a database would be). It answers turns {@code turn-c<k>-<i>} of four
 * conversations in turn and prints {@code DURABLE turn-c<k>-<i>} once a request has returned: an
 * acknowledged turn. SIGTERM runs its shutdown hook: the write-behind store's {@code close()}.
 *
 * <p>Arguments: {@code serve <store file> <spool dir or -> <held: true|false>} answers turns until
 * it is stopped; with {@code held}, the store behind never takes a write (everything acknowledged
 * is only in the spool). {@code recover <store file> <spool dir>} builds the write-behind store on
 * the spool, writes what it holds, stops and prints {@code RECOVERED <report>}.
 */
public final class VectorMemoryChildMain {

    private VectorMemoryChildMain() {}

    public static void main(String[] args) throws Exception {
        ChildOutput.listenToTheTest();
        Path file = Path.of(args[1]);
        FileBackedStore durable = new FileBackedStore(file);
        VectorStore behind = durable;
        HeldVectorStore held = null;
        if (args.length > 3 && Boolean.parseBoolean(args[3])) {
            held = new HeldVectorStore(durable);
            held.hold(); // never opened: nothing reaches the file
            behind = held;
        }
        WriteBehindVectorStore.Builder builder = WriteBehindVectorStore.builder(behind).name("child");
        if (!args[2].equals("-")) {
            builder.spool(Path.of(args[2]));
        }
        WriteBehindVectorStore memory = builder.build();
        if (args[0].equals("recover")) {
            WriteBehindReport<String> report = memory.stop(Duration.ofSeconds(60));
            ChildOutput.say("RECOVERED " + report.complete() + " " + report.writtenIds().size());
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(memory::close, "close-vector-memory"));
        ChatClient chat = ChatClient.builder(prompt -> new ChatResponse(List.of(new Generation(
                        new AssistantMessage("noted: " + prompt.getUserMessage().getText())))))
                .defaultAdvisors(VectorStoreChatMemoryAdvisor.builder(memory).defaultTopK(3).build()).build();
        ChildOutput.say("READY");
        for (int i = 1; ; i++) {
            for (int k = 0; k < 4; k++) {
                String turn = "turn-c" + k + "-" + i;
                String conversation = "c" + k;
                chat.prompt().user(turn).advisors(a -> a.param(ChatMemory.CONVERSATION_ID, conversation)).call().content();
                ChildOutput.durable(List.of(turn));
            }
        }
    }


    /** A {@link SimpleVectorStore} on the real model that saves itself to its file, atomically, after every write. */
    static final class FileBackedStore implements VectorStore {
        private final SimpleVectorStore store = SimpleVectorStore.builder(new MiniLmEmbeddingModel()).build();
        private final Path file;

        FileBackedStore(Path file) {
            this.file = file;
            if (Files.exists(file)) {
                store.load(file.toFile());
            }
        }

        @Override
        public synchronized void add(List<Document> documents) {
            store.add(documents);
            save();
        }

        @Override
        public synchronized void delete(List<String> idList) {
            store.delete(idList);
            save();
        }

        @Override
        public synchronized void delete(Filter.Expression filterExpression) {
            store.delete(filterExpression);
            save();
        }

        @Override
        public List<Document> similaritySearch(SearchRequest request) {
            return store.similaritySearch(request);
        }

        private void save() {
            try {
                Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
                store.save(new File(tmp.toString()));
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
