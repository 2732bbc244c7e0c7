package dev.memlife;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A manager's memory tools: which provider offers each tool name (the first to register it; a
 * later provider offering the same name is logged and ignored), the list of tools for the model,
 * and the routing of a tool call to its provider. A provider's failure in a call never reaches the
 * model as an exception: it gets a JSON error object instead.
 *
 * <p>Thread-safe: the index is copy-on-write, replaced only under the manager's registration lock,
 * and read without a lock.
 */
final class ToolRouter {

    private static final Logger LOG = LoggerFactory.getLogger(MemoryManager.class);

    private final String managerName;
    private final ProviderCalls calls;
    /** Tool name to the provider that registered it first; replaced whole, never changed. */
    private volatile Map<String, RegisteredProvider> owners = Map.of();

    ToolRouter(String managerName, ProviderCalls calls) {
        this.managerName = managerName;
        this.calls = calls;
    }

    /**
     * Indexes the tools {@code p} offers; a name another provider already offers keeps that
     * provider, and is logged. Called under the manager's registration lock, before {@code p} is
     * published to the other hooks.
     */
    void register(RegisteredProvider p, List<ToolSchema> tools) {
        Map<String, RegisteredProvider> next = new HashMap<>(owners);
        for (ToolSchema tool : tools == null ? List.<ToolSchema>of() : tools) {
            RegisteredProvider first = next.putIfAbsent(tool.name(), p);
            if (first != null) {
                LOG.warn("memory tool '{}' of provider '{}' ignored: provider '{}' already offers it",
                        tool.name(), p.name, first.name);
            }
        }
        owners = Map.copyOf(next);
    }

    /**
     * Every tool the providers offer now, asked of each provider in order (a failing or shut-down
     * provider offers none); a tool name is listed once, for the provider it routes to.
     */
    List<ToolSchema> schemas(RegisteredProvider[] providers) {
        Map<String, RegisteredProvider> index = owners;
        List<ToolSchema> out = new ArrayList<>();
        for (RegisteredProvider p : providers) {
            List<ToolSchema> tools = calls.leased(p, "toolSchemas", p.provider::toolSchemas, List.of());
            for (ToolSchema tool : tools == null ? List.<ToolSchema>of() : tools) {
                if (index.get(tool.name()) == p) {
                    out.add(tool);
                }
            }
        }
        return out;
    }

    /** Whether a provider offers {@code tool}. */
    boolean has(String tool) {
        return owners.containsKey(tool);
    }

    /**
     * Calls {@code tool} on the provider that offers it, on this thread, with an immutable copy of
     * {@code args}.
     *
     * @return the provider's answer; a JSON error object if it failed or is shut down, or if no
     *     provider offers {@code tool}
     */
    String call(String tool, Map<String, Object> args) {
        Map<String, RegisteredProvider> index = owners;
        RegisteredProvider owner = index.get(tool);
        if (owner == null) {
            LOG.debug("memory manager '{}': no provider offers tool '{}'; offered: {}", managerName, tool,
                    index.keySet());
            return error("No memory provider handles tool '" + tool + "'");
        }
        Map<String, Object> argsCopy = Map.copyOf(args);
        return calls.leased(owner, "handleToolCall(" + tool + ")", ProviderCalls.Interrupts.CLEAR,
                () -> owner.provider.handleToolCall(tool, argsCopy),
                t -> error("memory tool '" + tool + "' failed: " + t),
                () -> error("memory tool '" + tool + "' is unavailable: its provider is shut down"));
    }

    /** A JSON object {@code {"error":"<message>"}}, for the model. */
    private static String error(String message) {
        return "{\"error\":\"" + jsonEscape(message) + "\"}";
    }

    private static String jsonEscape(String s) {
        StringBuilder out = new StringBuilder(s.length() + 8);
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        return out.toString();
    }
}
