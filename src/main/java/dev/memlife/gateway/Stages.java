package dev.memlife.gateway;

import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/** How the gateway's results print a teardown that may still be running: its state, not its identity. */
final class Stages {

    private Stages() {}

    /** {@return "running", "done: " and the report, or "failed: " and the exception; "none" if empty} */
    static String describe(Optional<? extends CompletionStage<?>> stage) {
        if (stage.isEmpty()) {
            return "none";
        }
        CompletableFuture<?> now = stage.get().toCompletableFuture();
        if (!now.isDone()) {
            return "running";
        }
        try {
            return "done: " + now.join();
        } catch (CompletionException | CancellationException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            return "failed: " + cause;
        }
    }
}
