package dev.memlife;

import static java.util.Objects.requireNonNull;

/**
 * One message of a conversation transcript: a role ({@code "user"}, {@code "assistant"},
 * {@code "system"}, {@code "tool"} or any other the host uses) and its text. Immutable and
 * thread-safe.
 *
 * @param role the speaker's role, never null
 * @param content the text, never null (may be empty)
 */
public record Message(String role, String content) {

    /** The role of a message written by the user. */
    public static final String USER = "user";
    /** The role of a message written by the model. */
    public static final String ASSISTANT = "assistant";

    /**
     * A message with the given role and text.
     *
     * @param role the speaker's role
     * @param content the text
     * @throws NullPointerException if {@code role} or {@code content} is null
     */
    public Message {
        requireNonNull(role, "role");
        requireNonNull(content, "content");
    }

    /**
     * A message with the {@value #USER} role.
     *
     * @param content what the user wrote
     * @return the message
     * @throws NullPointerException if {@code content} is null
     */
    public static Message user(String content) {
        return new Message(USER, content);
    }

    /**
     * A message with the {@value #ASSISTANT} role.
     *
     * @param content what the model replied
     * @return the message
     * @throws NullPointerException if {@code content} is null
     */
    public static Message assistant(String content) {
        return new Message(ASSISTANT, content);
    }
}
