package dev.memlife.springai;

import dev.memlife.internal.SpoolText;
import dev.memlife.internal.StateJournal;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.MessageType;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;

/**
 * How {@link WriteBehindChatMemoryRepository}'s spool keeps messages: each message's type and
 * text, an assistant message's tool calls and a tool message's responses; not their metadata or
 * media (as Spring AI's JDBC repository keeps type and text only).
 */
final class SpoolCodec implements StateJournal.StringIds<Message> {

    static final SpoolCodec INSTANCE = new SpoolCodec();

    private SpoolCodec() {}

    @Override
    public byte[] state(List<Message> state) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(state.size());
            for (Message m : state) {
                text(out, m.getMessageType().name());
                text(out, m.getText());
                if (m instanceof AssistantMessage a) {
                    out.writeInt(a.getToolCalls().size());
                    for (AssistantMessage.ToolCall c : a.getToolCalls()) {
                        text(out, c.id());
                        text(out, c.type());
                        text(out, c.name());
                        text(out, c.arguments());
                    }
                } else if (m instanceof ToolResponseMessage t) {
                    out.writeInt(t.getResponses().size());
                    for (ToolResponseMessage.ToolResponse r : t.getResponses()) {
                        text(out, r.id());
                        text(out, r.name());
                        text(out, r.responseData());
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // not on a byte array
        }
        return bytes.toByteArray();
    }

    @Override
    public List<Message> state(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int n = in.readInt();
            List<Message> messages = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                MessageType type = MessageType.valueOf(text(in));
                String text = text(in);
                switch (type) {
                    case USER -> messages.add(new UserMessage(text == null ? "" : text));
                    case SYSTEM -> messages.add(new SystemMessage(text == null ? "" : text));
                    case ASSISTANT -> {
                        List<AssistantMessage.ToolCall> calls = new ArrayList<>();
                        for (int c = in.readInt(); c > 0; c--) {
                            calls.add(new AssistantMessage.ToolCall(text(in), text(in), text(in), text(in)));
                        }
                        messages.add(AssistantMessage.builder().content(text).toolCalls(calls).build());
                    }
                    case TOOL -> {
                        List<ToolResponseMessage.ToolResponse> responses = new ArrayList<>();
                        for (int r = in.readInt(); r > 0; r--) {
                            responses.add(new ToolResponseMessage.ToolResponse(text(in), text(in), text(in)));
                        }
                        messages.add(ToolResponseMessage.builder().responses(responses).build());
                    }
                    default -> throw new IllegalArgumentException("a message type this spool does not know: " + type);
                }
            }
            return messages;
        } catch (IOException e) {
            throw new UncheckedIOException("a damaged state in a write-behind spool", e);
        }
    }

    private static void text(DataOutputStream out, String s) throws IOException {
        SpoolText.write(out, s);
    }

    private static String text(DataInputStream in) throws IOException {
        return SpoolText.read(in);
    }
}
