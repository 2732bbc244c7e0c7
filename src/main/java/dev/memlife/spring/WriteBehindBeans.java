package dev.memlife.spring;

import dev.memlife.WriteBehind;
import dev.memlife.WriteBehindFigures;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * The application's write-behind decorators (every {@link WriteBehind} bean: the Spring AI
 * repository, the LangChain4j store, and any other), by bean name, as the starter's health, metrics
 * and start-up line see them.
 */
final class WriteBehindBeans {

    private WriteBehindBeans() {}

    /**
     * One write-behind bean.
     *
     * @param name its bean name
     * @param type its class's simple name
     * @param figures its figures
     */
    record Found(String name, String type, Supplier<WriteBehindFigures> figures) {}

    /** {@return every write-behind bean created so far, in bean order} */
    static List<Found> find(ListableBeanFactory beans) {
        List<Found> all = new ArrayList<>();
        beans.getBeansOfType(WriteBehind.class, false, false).forEach((name, bean) ->
                all.add(new Found(name, bean.getClass().getSimpleName(), bean::figures)));
        return all;
    }

    /** {@return each write-behind bean's figures, by bean name, in the order of {@link #find}} */
    static Map<String, Supplier<WriteBehindFigures>> figures(ListableBeanFactory beans) {
        Map<String, Supplier<WriteBehindFigures>> byName = new LinkedHashMap<>();
        find(beans).forEach(f -> byName.put(f.name(), f.figures()));
        return byName;
    }
}
