package dev.memlife.spring;

import dev.memlife.springai.WriteBehindVectorStore;
import java.nio.file.Path;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.ai.vectorstore.VectorStore;
import org.springframework.beans.factory.config.DestructionAwareBeanPostProcessor;

/**
 * Wraps every Spring AI {@link VectorStore} bean in a {@link WriteBehindVectorStore} named after
 * the bean (memlife.vector-store.write-behind=true). Spring destroys a bean as it was made, not
 * as a post-processor exposed it: at the context's shutdown, just before the store behind is
 * destroyed (its own {@code close()} or {@code destroy()}, as without the wrapper), this drains
 * its wrapper within the close timeout.
 */
final class WriteBehindVectorStores implements DestructionAwareBeanPostProcessor {

    private static final Logger LOG = LoggerFactory.getLogger(WriteBehindVectorStores.class);

    private final MemlifeProperties.VectorStore settings;
    /** The stores wrapped, each to its wrapper. */
    private final Map<Object, WriteBehindVectorStore> wrappers = Collections.synchronizedMap(new IdentityHashMap<>());

    WriteBehindVectorStores(MemlifeProperties.VectorStore settings) {
        this.settings = settings;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (!(bean instanceof VectorStore store) || bean instanceof WriteBehindVectorStore) {
            return bean;
        }
        WriteBehindVectorStore.Builder builder = WriteBehindVectorStore.builder(store).name(beanName)
                .batchSize(settings.batchSize()).closeTimeout(settings.closeTimeout());
        if (settings.spoolDir() != null && !settings.spoolDir().isBlank()) {
            builder.spool(Path.of(settings.spoolDir()).resolve(beanName)).durable(settings.durable());
        }
        WriteBehindVectorStore wrapper = builder.build();
        wrappers.put(store, wrapper);
        LOG.info("memlife: vector store bean '{}' ({}) is written behind: {}", beanName,
                store.getClass().getSimpleName(), wrapper);
        return wrapper;
    }

    @Override
    public boolean requiresDestruction(Object bean) {
        return wrappers.containsKey(bean);
    }

    @Override
    public void postProcessBeforeDestruction(Object bean, String beanName) {
        WriteBehindVectorStore wrapper = wrappers.remove(bean);
        if (wrapper != null) {
            wrapper.close(); // drains within the close timeout and logs what it left, if anything
        }
    }
}
