package dev.memlife.testing;

import dev.memlife.Message;
import dev.memlife.Turn;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A recording provider that hangs in the hooks a test chooses until the test {@link #release()}s
 * it: the wedged provider that must never hang a flush, a drain or a shutdown. Like a real wedged
 * call it ignores interrupts while it hangs (it restores the interrupt flag when released).
 *
 * <p>A test must release it when done (in a {@code finally} or {@code @AfterEach}); a hung call
 * holds its thread until then. Thread-safe.
 */
public class HangingProvider extends RecordingProvider {

    private final Set<Hook> hooks;
    private final CountDownLatch released = new CountDownLatch(1);
    private final AtomicInteger hanging = new AtomicInteger();
    private final CountDownLatch hung = new CountDownLatch(1);

    /**
     * A provider that hangs in every call of the given hooks, until {@link #release()}.
     *
     * @param name the provider's name
     * @param hooks the hooks that hang; none: a provider that only records
     */
    public HangingProvider(String name, Hook... hooks) {
        super(name);
        this.hooks = hooks.length == 0 ? EnumSet.noneOf(Hook.class) : EnumSet.copyOf(Set.of(hooks));
    }

    private void maybeHang(Hook hook) {
        if (!hooks.contains(hook) || released.getCount() == 0) {
            return;
        }
        record("hang:" + hook);
        hanging.incrementAndGet();
        hung.countDown();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    released.await();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // a wedged call does not notice interrupts
                }
            }
        } finally {
            hanging.decrementAndGet();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Lets every hung call return, and every later call pass without hanging. */
    public void release() {
        released.countDown();
    }

    /** {@return how many calls are hanging right now} */
    public int hangingCount() {
        return hanging.get();
    }

    /**
     * Waits until some call hangs (now or earlier), for at most {@code timeout}.
     *
     * @param timeout how long to wait at most
     * @return true once a call has hung; false on timeout or interrupt (flag restored)
     */
    public boolean awaitHanging(Duration timeout) {
        try {
            return hung.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public void initialize(String sessionId) {
        maybeHang(Hook.INITIALIZE);
        super.initialize(sessionId);
    }

    @Override
    public String prefetch(String query, String sessionId) {
        maybeHang(Hook.PREFETCH);
        return super.prefetch(query, sessionId);
    }

    @Override
    public void syncTurn(Turn turn) {
        maybeHang(Hook.SYNC_TURN);
        super.syncTurn(turn);
    }

    @Override
    public void onSessionEnd(List<Message> messages) {
        maybeHang(Hook.ON_SESSION_END);
        super.onSessionEnd(messages);
    }

    @Override
    public void shutdown() {
        maybeHang(Hook.SHUTDOWN);
        super.shutdown();
    }
}
