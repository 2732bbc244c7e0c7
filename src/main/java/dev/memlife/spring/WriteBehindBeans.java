package dev.memlife.spring;

import dev.memlife.WriteBehindFigures;
import dev.memlife.langchain4j.WriteBehindChatMemoryStore;
import dev.memlife.springai.WriteBehindChatMemoryRepository;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.util.ClassUtils;

/**
 * The application's write-behind chat memories (the Spring AI repository, the LangChain4j store),
 * by bean name, as the starter's health, metrics and start-up line see them. Each framework is
 * optional: a nested class touches a framework's type only once that framework is on the class
 * path.
 */
final class WriteBehindBeans {

    static final String SPRING_AI = "dev.memlife.springai.WriteBehindChatMemoryRepository";
    static final String LANGCHAIN4J = "dev.memlife.langchain4j.WriteBehindChatMemoryStore";

    private WriteBehindBeans() {}

    /**
     * One write-behind bean.
     *
     * @param name its bean name
     * @param type its class's simple name
     * @param figures its figures
     */
    record Found(String name, String type, Supplier<WriteBehindFigures> figures) {}

    /** {@return every write-behind bean created so far: the Spring AI ones, then the LangChain4j ones, in bean order} */
    static List<Found> find(ListableBeanFactory beans) {
        List<Found> all = new ArrayList<>();
        ClassLoader loader = WriteBehindBeans.class.getClassLoader();
        if (ClassUtils.isPresent(SPRING_AI, loader)) {
            SpringAi.add(beans, all);
        }
        if (ClassUtils.isPresent(LANGCHAIN4J, loader)) {
            LangChain4j.add(beans, all);
        }
        return all;
    }

    /** {@return each write-behind bean's figures, by bean name, in the order of {@link #find}} */
    static Map<String, Supplier<WriteBehindFigures>> figures(ListableBeanFactory beans) {
        Map<String, Supplier<WriteBehindFigures>> byName = new LinkedHashMap<>();
        find(beans).forEach(f -> byName.put(f.name(), f.figures()));
        return byName;
    }

    private static final class SpringAi {
        static void add(ListableBeanFactory beans, List<Found> into) {
            beans.getBeansOfType(WriteBehindChatMemoryRepository.class, false, false).forEach((name, bean) ->
                    into.add(new Found(name, WriteBehindChatMemoryRepository.class.getSimpleName(), bean::figures)));
        }
    }

    private static final class LangChain4j {
        static void add(ListableBeanFactory beans, List<Found> into) {
            beans.getBeansOfType(WriteBehindChatMemoryStore.class, false, false).forEach((name, bean) ->
                    into.add(new Found(name, WriteBehindChatMemoryStore.class.getSimpleName(), bean::figures)));
        }
    }
}
