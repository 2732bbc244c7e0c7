package dev.memlife.spring;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.ClassUtils;

/**
 * Whether the application wants memlife's agent side: the gateway, the session tracker, the
 * shared store (and its tables), the spool and the lifecycle that drains them. Yes when {@code
 * memlife.gateway.enabled=true}; no when it is false. Unset, yes unless the application keeps its
 * conversations in a framework's chat memory: a Spring AI {@code ChatMemoryRepository} or a
 * LangChain4j {@code ChatMemoryStore} bean (memlife's write-behind ones included). Such an
 * application gets only what it wires itself, and no memlife table in its database.
 */
final class MemlifeCoreWanted extends SpringBootCondition implements ConfigurationCondition {

    /** The property that turns the agent side on or off whatever else the application defines. */
    static final String PROPERTY = "memlife.gateway.enabled";

    /** The chat memories whose presence says the application keeps its conversations in a framework. */
    private static final String[] CHAT_MEMORIES = {
            "org.springframework.ai.chat.memory.ChatMemoryRepository",
            "dev.langchain4j.store.memory.chat.ChatMemoryStore"};

    @Override
    public ConfigurationPhase getConfigurationPhase() {
        return ConfigurationPhase.REGISTER_BEAN; // the application's bean definitions are known by then
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        String set = context.getEnvironment().getProperty(PROPERTY);
        if (set != null) {
            return Boolean.parseBoolean(set.trim()) ? ConditionOutcome.match(PROPERTY + "=true")
                    : ConditionOutcome.noMatch(PROPERTY + "=false");
        }
        ConfigurableListableBeanFactory beans = context.getBeanFactory();
        if (beans != null) {
            for (String type : CHAT_MEMORIES) {
                if (ClassUtils.isPresent(type, context.getClassLoader())) {
                    Class<?> chatMemory = ClassUtils.resolveClassName(type, context.getClassLoader());
                    String[] names = beans.getBeanNamesForType(chatMemory, true, false);
                    if (names.length > 0) {
                        return ConditionOutcome.noMatch("the application keeps its conversations in a "
                                + chatMemory.getSimpleName() + " ('" + names[0] + "') and " + PROPERTY + " is not set");
                    }
                }
            }
        }
        return ConditionOutcome.match("no chat memory bean, and " + PROPERTY + " not set");
    }
}
