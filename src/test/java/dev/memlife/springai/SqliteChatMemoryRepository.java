package dev.memlife.springai;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.MessageType;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.UserMessage;

/**
 * A plain JDBC {@link ChatMemoryRepository} on a SQLite file, as Spring AI's own JDBC repository
 * keeps a conversation: a row per message, its type and text, in order; a save replaces the
 * conversation's rows in one transaction. One connection, one call at a time.
 */
public final class SqliteChatMemoryRepository implements ChatMemoryRepository, AutoCloseable {

    private final Connection connection;

    /**
     * @param file the SQLite file, created if missing
     * @throws SQLException if it cannot be opened
     */
    public SqliteChatMemoryRepository(Path file) throws SQLException {
        connection = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
        try (Statement s = connection.createStatement()) {
            s.execute("PRAGMA journal_mode=WAL");
            s.execute("PRAGMA synchronous=FULL");
            s.execute("CREATE TABLE IF NOT EXISTS chat_messages (conversation_id TEXT NOT NULL, n INTEGER NOT NULL,"
                    + " type TEXT NOT NULL, content TEXT NOT NULL, PRIMARY KEY (conversation_id, n))");
        }
    }

    @Override
    public synchronized List<String> findConversationIds() {
        List<String> ids = new ArrayList<>();
        try (Statement s = connection.createStatement();
                ResultSet r = s.executeQuery("SELECT DISTINCT conversation_id FROM chat_messages ORDER BY 1")) {
            while (r.next()) {
                ids.add(r.getString(1));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return ids;
    }

    @Override
    public synchronized List<Message> findByConversationId(String conversationId) {
        List<Message> messages = new ArrayList<>();
        try (PreparedStatement s = connection.prepareStatement(
                "SELECT type, content FROM chat_messages WHERE conversation_id = ? ORDER BY n")) {
            s.setString(1, conversationId);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    String text = r.getString(2);
                    messages.add(switch (MessageType.valueOf(r.getString(1))) {
                        case USER -> new UserMessage(text);
                        case ASSISTANT -> new AssistantMessage(text);
                        case SYSTEM -> new SystemMessage(text);
                        default -> throw new IllegalStateException("not kept by this test repository: " + r.getString(1));
                    });
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return messages;
    }

    @Override
    public synchronized void saveAll(String conversationId, List<Message> messages) {
        try {
            connection.setAutoCommit(false);
            delete(conversationId);
            try (PreparedStatement s = connection.prepareStatement(
                    "INSERT INTO chat_messages (conversation_id, n, type, content) VALUES (?, ?, ?, ?)")) {
                for (int i = 0; i < messages.size(); i++) {
                    s.setString(1, conversationId);
                    s.setInt(2, i);
                    s.setString(3, messages.get(i).getMessageType().name());
                    s.setString(4, messages.get(i).getText());
                    s.addBatch();
                }
                s.executeBatch();
            }
            connection.commit();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        } finally {
            try {
                connection.setAutoCommit(true);
            } catch (SQLException ignored) {
                // the connection is gone
            }
        }
    }

    @Override
    public synchronized void deleteByConversationId(String conversationId) {
        try {
            delete(conversationId);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private void delete(String conversationId) throws SQLException {
        try (PreparedStatement s = connection.prepareStatement("DELETE FROM chat_messages WHERE conversation_id = ?")) {
            s.setString(1, conversationId);
            s.executeUpdate();
        }
    }

    @Override
    public synchronized void close() throws SQLException {
        connection.close();
    }
}
