package dev.memlife;

import static java.util.Objects.requireNonNull;

import java.util.Map;

/**
 * A tool a provider offers the model: its name, a description, and its parameters as a JSON-schema
 * object (nested maps, lists, strings, numbers and booleans). Immutable and thread-safe.
 *
 * @param name the tool name, unique across a manager's providers; never blank
 * @param description what the tool does, for the model; never null
 * @param parameters the JSON schema of the arguments; never null, copied
 */
public record ToolSchema(String name, String description, Map<String, Object> parameters) {

    /**
     * A tool with the given name, description and parameter schema.
     *
     * @param name the tool name
     * @param description what the tool does
     * @param parameters the JSON schema of the arguments; copied
     * @throws NullPointerException if an argument, or a key or value of {@code parameters}, is null
     * @throws IllegalArgumentException if {@code name} is blank
     */
    public ToolSchema {
        requireNonNull(name, "name");
        requireNonNull(description, "description");
        requireNonNull(parameters, "parameters");
        if (name.isBlank()) {
            throw new IllegalArgumentException("tool name must not be blank");
        }
        parameters = Map.copyOf(parameters);
    }

    /**
     * A tool that takes no arguments: its parameters are an object schema with no properties.
     *
     * @param name the tool name
     * @param description what the tool does
     * @return the schema
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} is blank
     */
    public static ToolSchema of(String name, String description) {
        return new ToolSchema(name, description, Map.of("type", "object", "properties", Map.of()));
    }
}
