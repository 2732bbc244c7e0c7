/**
 * Session commits and the shutdown drain. {@link dev.memlife.session.SessionCommitTracker} knows,
 * per session, which completed turns are not yet committed (end-of-session extraction) and which
 * owner did them, commits them at session boundaries, inline or in the background, and drains
 * whatever is left at shutdown within a deadline; {@link dev.memlife.session.ShutdownHooks} is the
 * opt-in JVM shutdown hook that stops trackers, any {@link dev.memlife.Stoppable}
 * component (such as a gateway) and memory managers, in that order, under one shared deadline. The
 * result types ({@code CommitResult}, {@code BackgroundCommit}, {@code DiscardResult}, {@code
 * SessionDrainReport}, {@code ShutdownReport}) say what each call did. The package depends on
 * {@code dev.memlife.agent} (the {@link dev.memlife.agent.SessionCommitter} contract it commits
 * through) and the core {@code dev.memlife} (the managers the hook shuts down), and on the
 * unexported {@code dev.memlife.internal}; not on {@code dev.memlife.gateway}, and nothing in
 * memlife depends on it.
 */
package dev.memlife.session;
