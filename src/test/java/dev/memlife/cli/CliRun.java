package dev.memlife.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.List;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * One run of the command line in the test's JVM, as a shell would start it: its exit code and what
 * it printed on each stream.
 */
record CliRun(List<String> args, int exit, String out, String err) {

    /** A Java stack trace's frame line: a user never sees one for a usage error. */
    static final Pattern NO_STACK_TRACE = Pattern.compile("\\n\\s+at [\\w.$]+\\(");

    /** Runs {@code args} with {@code env} as the environment. */
    static CliRun run(Function<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), env, Clock.systemUTC());
        return new CliRun(List.of(args), exit, out.toString(StandardCharsets.UTF_8),
                err.toString(StandardCharsets.UTF_8));
    }

    /** Runs {@code args} with an empty environment. */
    static CliRun run(String... args) {
        return run(name -> null, args);
    }

    /**
     * Asserts the run was refused as a usage error: exit {@link Main#EXIT_USAGE}, nothing on
     * standard out, and on standard error {@code message}, each of {@code usage}, and no stack
     * trace.
     */
    void assertUsageError(String message, String... usage) {
        assertThat(exit).as("%s: %s", args, err).isEqualTo(Main.EXIT_USAGE);
        assertThat(out).as("%s", args).isEmpty();
        assertThat(err).as("%s", args).startsWith("memlife: ").contains(message).contains(usage)
                .doesNotContainPattern(NO_STACK_TRACE);
    }
}
