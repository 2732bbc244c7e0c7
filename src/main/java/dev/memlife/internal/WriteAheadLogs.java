package dev.memlife.internal;

import dev.memlife.DurableLog;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * How the core reaches the {@link WriteAheadLog} behind a public {@link DurableLog} without the
 * core depending on the package that implements it, and without the protocol being public: each
 * implementation registers, from its class's static initializer, how to get the protocol from one
 * of its instances. (The JDK's shared-secrets pattern: an instance exists only once its class is
 * initialized, so the registration is always there before the core asks.)
 */
public final class WriteAheadLogs {

    private static final Map<Class<?>, Function<Object, WriteAheadLog>> PROTOCOLS = new ConcurrentHashMap<>();

    private WriteAheadLogs() {}

    /**
     * Registers the protocol of a {@link DurableLog} implementation.
     *
     * @param type the implementation, a final class
     * @param protocol gets an instance's protocol
     * @param <T> the implementation
     */
    public static <T extends DurableLog> void register(Class<T> type, Function<T, WriteAheadLog> protocol) {
        PROTOCOLS.put(type, log -> protocol.apply(type.cast(log)));
    }

    /**
     * The protocol behind {@code log}.
     *
     * @param log a durable log memlife made
     * @return its protocol
     * @throws IllegalArgumentException if {@code log} is not one of memlife's logs
     */
    public static WriteAheadLog of(DurableLog log) {
        Function<Object, WriteAheadLog> protocol = PROTOCOLS.get(log.getClass());
        if (protocol == null) {
            throw new IllegalArgumentException("not a durable log memlife made: " + log.getClass().getName()
                    + "; open one with dev.memlife.spool.Spool.open(dir)");
        }
        return protocol.apply(log);
    }
}
