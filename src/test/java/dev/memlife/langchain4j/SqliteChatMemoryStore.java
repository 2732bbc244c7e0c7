package dev.memlife.langchain4j;

import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ChatMessageDeserializer;
import dev.langchain4j.data.message.ChatMessageSerializer;
import dev.langchain4j.store.memory.chat.ChatMemoryStore;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A plain JDBC {@link ChatMemoryStore} on a SQLite file, as an application would write one: one
 * row per memory id, its messages as LangChain4j's own JSON ({@link ChatMessageSerializer}), a
 * delete deletes the row. Memory ids are stored as their {@code toString()}. One connection, one
 * call at a time.
 */
public final class SqliteChatMemoryStore implements ChatMemoryStore, AutoCloseable {

    private final Connection connection;
    private final AtomicInteger updates = new AtomicInteger();
    private final AtomicInteger deletes = new AtomicInteger();

    public SqliteChatMemoryStore(Path file) throws SQLException {
        connection = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
        try (Statement s = connection.createStatement()) {
            s.execute("PRAGMA journal_mode=WAL");
            s.execute("PRAGMA synchronous=FULL");
            s.execute("CREATE TABLE IF NOT EXISTS chat_memory (memory_id TEXT PRIMARY KEY, messages TEXT NOT NULL)");
        }
    }

    @Override
    public synchronized List<ChatMessage> getMessages(Object memoryId) {
        try (PreparedStatement s = connection.prepareStatement("SELECT messages FROM chat_memory WHERE memory_id = ?")) {
            s.setString(1, memoryId.toString());
            try (ResultSet r = s.executeQuery()) {
                return r.next() ? ChatMessageDeserializer.messagesFromJson(r.getString(1)) : new ArrayList<>();
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public synchronized void updateMessages(Object memoryId, List<ChatMessage> messages) {
        updates.incrementAndGet();
        try (PreparedStatement s = connection.prepareStatement("INSERT INTO chat_memory (memory_id, messages) VALUES"
                + " (?, ?) ON CONFLICT (memory_id) DO UPDATE SET messages = excluded.messages")) {
            s.setString(1, memoryId.toString());
            s.setString(2, ChatMessageSerializer.messagesToJson(messages));
            s.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public synchronized void deleteMessages(Object memoryId) {
        deletes.incrementAndGet();
        try (PreparedStatement s = connection.prepareStatement("DELETE FROM chat_memory WHERE memory_id = ?")) {
            s.setString(1, memoryId.toString());
            s.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@return the rows of the table: one per memory id with messages, none for a deleted one} */
    synchronized List<String> rows() throws SQLException {
        List<String> ids = new ArrayList<>();
        try (Statement s = connection.createStatement();
                ResultSet r = s.executeQuery("SELECT memory_id FROM chat_memory ORDER BY memory_id")) {
            while (r.next()) {
                ids.add(r.getString(1));
            }
        }
        return ids;
    }

    int updates() {
        return updates.get();
    }

    int deletes() {
        return deletes.get();
    }

    @Override
    public synchronized void close() throws SQLException {
        connection.close();
    }
}
