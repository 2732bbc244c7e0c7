/**
 * The test kit for users of memlife: providers and a time source to unit-test your own reset paths,
 * teardowns and shutdown hooks with, the same ones memlife's own tests use. {@link
 * dev.memlife.testing.RecordingProvider} records every turn and lifecycle event; {@link
 * dev.memlife.testing.FailingProvider} throws from the {@link dev.memlife.testing.Hook hooks} a test
 * chooses; {@link dev.memlife.testing.GatedProvider} holds the writer thread until the test opens a
 * gate; {@link dev.memlife.testing.HangingProvider} hangs, ignoring interrupts, until released; and
 * {@link dev.memlife.testing.ManualTicker} is a {@link dev.memlife.Ticker} that moves only when the
 * test advances it. It ships in the main jar so that tests can use it without another dependency,
 * and is meant for tests only. The package depends on the core {@code dev.memlife} only (the
 * provider interface, its values and {@code Ticker}); nothing in memlife's main code depends on it.
 */
package dev.memlife.testing;
