package dev.memlife.langchain4j;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.store.memory.chat.ChatMemoryStore;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import dev.memlife.faults.HeldBackend;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * A store the test controls, over LangChain4j's own {@link InMemoryChatMemoryStore}: it counts and
 * logs every write, can hold writes until the test lets them through (ignoring interrupts, like a
 * hung database call), and can fail chosen writes. Reads are never held. Every hold is bounded by
 * {@link HeldBackend#MAX_HOLD}, so a broken test cannot hang the build.
 */
final class SlowChatMemoryStore extends HeldBackend<Object> implements ChatMemoryStore {

    private final InMemoryChatMemoryStore delegate = new InMemoryChatMemoryStore();
    private final AtomicInteger updates = new AtomicInteger();
    private final AtomicInteger deletes = new AtomicInteger();

    SlowChatMemoryStore() {
        super("store down for memory id");
    }

    @Override
    public List<ChatMessage> getMessages(Object memoryId) {
        return delegate.getMessages(memoryId);
    }

    @Override
    public void updateMessages(Object memoryId, List<ChatMessage> messages) {
        updates.incrementAndGet();
        write(memoryId, "update " + memoryId + " " + texts(messages),
                () -> delegate.updateMessages(memoryId, messages));
    }

    @Override
    public void deleteMessages(Object memoryId) {
        deletes.incrementAndGet();
        write(memoryId, "delete " + memoryId, () -> delegate.deleteMessages(memoryId));
    }

    /** {@return updateMessages calls the store received (held, failed or written)} */
    int updates() {
        return updates.get();
    }

    /** {@return deleteMessages calls the store received} */
    int deletes() {
        return deletes.get();
    }

    /** {@return the texts the store holds for {@code memoryId}, read past any write-behind} */
    List<String> stored(Object memoryId) {
        return texts(delegate.getMessages(memoryId));
    }

    static List<String> texts(List<ChatMessage> messages) {
        return messages.stream().map(SlowChatMemoryStore::text).collect(Collectors.toList());
    }

    static String text(ChatMessage m) {
        if (m instanceof UserMessage) {
            return ((UserMessage) m).singleText();
        }
        if (m instanceof AiMessage) {
            return ((AiMessage) m).text();
        }
        return m.toString();
    }
}
