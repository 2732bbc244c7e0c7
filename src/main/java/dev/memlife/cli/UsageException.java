package dev.memlife.cli;

/** A usage error: exit code {@value Main#EXIT_USAGE}, with the usage that applies. */
final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final String usage;
    final String helpCommand;

    UsageException(String message, String usage, String helpCommand) {
        super(message, null, false, false);
        this.usage = usage;
        this.helpCommand = helpCommand;
    }
}
