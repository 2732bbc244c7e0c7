package dev.memlife.langchain4j;

import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ChatMessageDeserializer;
import dev.langchain4j.data.message.ChatMessageSerializer;
import dev.memlife.internal.StateJournal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/**
 * How {@link WriteBehindChatMemoryStore}'s spool keeps memory ids and messages: the messages as
 * LangChain4j's own JSON ({@link ChatMessageSerializer}), a memory id with the type it had, which
 * must be one a spool can give back: {@code String}, {@code Integer}, {@code Long} or {@code UUID}.
 */
final class SpoolCodec implements StateJournal.Codec<Object, ChatMessage> {

    static final SpoolCodec INSTANCE = new SpoolCodec();

    private SpoolCodec() {}

    @Override
    public byte[] id(Object id) {
        char type;
        if (id instanceof String) {
            type = 'S';
        } else if (id instanceof Integer) {
            type = 'I';
        } else if (id instanceof Long) {
            type = 'L';
        } else if (id instanceof UUID) {
            type = 'U';
        } else {
            throw new IllegalArgumentException("a write-behind store with a spool keeps memory ids of type String, "
                    + "Integer, Long or UUID; got " + id.getClass().getName() + " (" + id + ")");
        }
        return (type + id.toString()).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public Object id(byte[] bytes) {
        String text = new String(bytes, StandardCharsets.UTF_8);
        String value = text.substring(1);
        switch (text.charAt(0)) {
            case 'S':
                return value;
            case 'I':
                return Integer.valueOf(value);
            case 'L':
                return Long.valueOf(value);
            case 'U':
                return UUID.fromString(value);
            default:
                throw new IllegalArgumentException("not a memory id of a write-behind spool: " + Arrays.toString(bytes));
        }
    }

    @Override
    public byte[] state(List<ChatMessage> state) {
        return ChatMessageSerializer.messagesToJson(state).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public List<ChatMessage> state(byte[] bytes) {
        return ChatMessageDeserializer.messagesFromJson(new String(bytes, StandardCharsets.UTF_8));
    }
}
