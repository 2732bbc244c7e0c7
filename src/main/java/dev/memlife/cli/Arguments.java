package dev.memlife.cli;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A command's arguments: one directory (or none, for a command that takes only options), options
 * with values, or a help flag; and the durations and the password they give.
 */
final class Arguments {

    /** A duration people write: a number and an optional unit. */
    private static final Pattern SIMPLE_DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)?");

    final List<String> positional = new ArrayList<>();
    final Map<String, String> options = new LinkedHashMap<>();
    final String usage;
    final String helpCommand;
    boolean help;

    private Arguments(String usage, String helpCommand) {
        this.usage = usage;
        this.helpCommand = helpCommand;
    }

    /**
     * Parses {@code args}: {@code --name value}, {@code --name=value}, {@code --} before a
     * directory that starts with '-'; a help flag anywhere wins over every error.
     */
    static Arguments of(List<String> args, Set<String> valued, String usage, String helpCommand) {
        Arguments p = parse(args, valued, usage, helpCommand);
        if (p.help) {
            return p;
        }
        if (p.positional.isEmpty()) {
            throw p.usage("missing DIR, the spool's directory");
        }
        if (p.positional.size() > 1) {
            throw p.usage("unexpected argument '" + p.positional.get(1) + "' (one DIR expected)");
        }
        return p;
    }

    /**
     * Parses {@code args} as {@link #of} does, for a command that takes options only: any other
     * argument is a usage error.
     */
    static Arguments optionsOnly(List<String> args, Set<String> valued, String usage, String helpCommand) {
        Arguments p = parse(args, valued, usage, helpCommand);
        if (!p.help && !p.positional.isEmpty()) {
            throw p.usage("unexpected argument '" + p.positional.get(0) + "' (this command takes options only)");
        }
        return p;
    }

    private static Arguments parse(List<String> args, Set<String> valued, String usage, String helpCommand) {
        Arguments p = new Arguments(usage, helpCommand);
        boolean optionsEnded = false;
        UsageException first = null;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (optionsEnded || !a.startsWith("-") || a.equals("-")) {
                p.positional.add(a);
                continue;
            }
            if (a.equals("--")) {
                optionsEnded = true;
                continue;
            }
            if (Main.HELP_FLAGS.contains(a)) {
                p.help = true;
                continue;
            }
            int eq = a.indexOf('=');
            String name = eq < 0 ? a : a.substring(0, eq);
            if (!valued.contains(name)) {
                first = first != null ? first : p.usage("unknown option '" + name + "'");
                continue;
            }
            String value;
            if (eq >= 0) {
                value = a.substring(eq + 1);
            } else if (i + 1 < args.size()) {
                value = args.get(++i);
            } else {
                first = first != null ? first : p.usage("option " + name + " needs a value");
                continue;
            }
            if (p.options.putIfAbsent(name, value) != null) {
                first = first != null ? first : p.usage("option " + name + " given twice");
            }
        }
        if (p.help) {
            return p;
        }
        if (first != null) {
            throw first;
        }
        return p;
    }

    Path directory() {
        String dir = positional.get(0);
        try {
            return Path.of(dir);
        } catch (InvalidPathException e) {
            throw usage("invalid DIR '" + dir + "': " + e.getMessage());
        }
    }

    Duration duration(String option) {
        String value = options.get(option);
        try {
            return parseDuration(value);
        } catch (IllegalArgumentException e) {
            throw usage("invalid " + option + " '" + value + "': " + e.getMessage());
        }
    }

    /**
     * The database password: {@code --password}, or the environment variable {@code
     * --password-env} names; null if neither is given.
     */
    String password(Function<String, String> env) {
        String given = options.get("--password");
        String var = options.get("--password-env");
        if (var == null) {
            return given;
        }
        if (given != null) {
            throw usage("give --password or --password-env, not both");
        }
        String value = env.apply(var);
        if (value == null) {
            throw usage("invalid --password-env '" + var + "': no such environment variable is set");
        }
        return value;
    }

    UsageException usage(String message) {
        return new UsageException(message, usage, helpCommand);
    }

    /**
     * A duration as people and ISO-8601 write it: {@code 500ms}, {@code 30s}, {@code 5m}, {@code
     * 1h}, {@code 2d}, a bare {@code 0}, or {@code PT30S}.
     *
     * @throws IllegalArgumentException if it is none of those, or negative
     */
    static Duration parseDuration(String text) {
        String t = text.strip();
        Duration d;
        if (t.regionMatches(true, 0, "P", 0, 1)) {
            try {
                d = Duration.parse(t.toUpperCase(Locale.ROOT));
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("not a duration (ISO-8601 expected, e.g. PT30S)");
            }
        } else {
            Matcher m = SIMPLE_DURATION.matcher(t.toLowerCase(Locale.ROOT));
            if (!m.matches() || m.group(2) == null && !m.group(1).chars().allMatch(c -> c == '0')) {
                throw new IllegalArgumentException("not a duration (e.g. 500ms, 30s, 5m, 1h, PT30S)");
            }
            long n;
            try {
                n = Long.parseLong(m.group(1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("too large");
            }
            String unit = m.group(2) == null ? "s" : m.group(2);
            try {
                d = switch (unit) {
                    case "ms" -> Duration.ofMillis(n);
                    case "s" -> Duration.ofSeconds(n);
                    case "m" -> Duration.ofMinutes(n);
                    case "h" -> Duration.ofHours(n);
                    default -> Duration.ofDays(n);
                };
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException("too large");
            }
        }
        if (d.isNegative()) {
            throw new IllegalArgumentException("negative");
        }
        return d;
    }
}
