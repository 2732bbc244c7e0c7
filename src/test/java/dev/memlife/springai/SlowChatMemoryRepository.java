package dev.memlife.springai;

import dev.memlife.faults.HeldBackend;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.memory.InMemoryChatMemoryRepository;
import org.springframework.ai.chat.messages.Message;

/**
 * A repository the test controls, over Spring AI's own {@link InMemoryChatMemoryRepository}: it
 * counts and logs every write, can hold writes until the test lets them through (ignoring
 * interrupts, like a hung database call), and can fail chosen writes. Reads are never held. Every
 * hold is bounded by {@link HeldBackend#MAX_HOLD}, so a broken test cannot hang the build.
 */
final class SlowChatMemoryRepository extends HeldBackend<String> implements ChatMemoryRepository {

    private final InMemoryChatMemoryRepository delegate = new InMemoryChatMemoryRepository();
    private final AtomicInteger saves = new AtomicInteger();
    private final AtomicInteger deletes = new AtomicInteger();

    SlowChatMemoryRepository() {
        super("repository down for conversation");
    }

    @Override
    public List<String> findConversationIds() {
        return delegate.findConversationIds();
    }

    @Override
    public List<Message> findByConversationId(String conversationId) {
        return delegate.findByConversationId(conversationId);
    }

    @Override
    public void saveAll(String conversationId, List<Message> messages) {
        saves.incrementAndGet();
        write(conversationId, "save " + conversationId + " " + texts(messages),
                () -> delegate.saveAll(conversationId, messages));
    }

    @Override
    public void deleteByConversationId(String conversationId) {
        deletes.incrementAndGet();
        write(conversationId, "delete " + conversationId, () -> delegate.deleteByConversationId(conversationId));
    }

    /** {@return saveAll calls the repository received (held, failed or written)} */
    int saves() {
        return saves.get();
    }

    /** {@return deleteByConversationId calls the repository received} */
    int deletes() {
        return deletes.get();
    }

    /** {@return the texts the repository holds for {@code conversationId}, read past any write-behind} */
    List<String> stored(String conversationId) {
        return texts(delegate.findByConversationId(conversationId));
    }

    /** {@return the conversation ids the repository holds, read past any write-behind} */
    List<String> storedIds() {
        return delegate.findConversationIds();
    }

    static List<String> texts(List<Message> messages) {
        return messages.stream().map(Message::getText).collect(Collectors.toList());
    }
}
