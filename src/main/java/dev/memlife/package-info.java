/**
 * The core of memlife: the {@link dev.memlife.MemoryManager}, which takes an agent's memory writes
 * off the request path and delivers them, in order, on one writer thread per manager, to the
 * {@link dev.memlife.MemoryProvider}s registered with it (the service-provider interface memory
 * stores implement), and at shutdown drains its queue within a deadline and accounts for every
 * write in a {@link dev.memlife.DrainReport}. The package also owns the values those calls carry
 * ({@link dev.memlife.Turn}, {@link dev.memlife.Message}, {@link dev.memlife.ToolSchema}, {@link
 * dev.memlife.WriteStatus}), the {@link dev.memlife.QueueFullException} of a full queue and the
 * {@link dev.memlife.Ticker} every timeout is measured with, and the shared face of the two
 * write-behind chat memories ({@code dev.memlife.langchain4j.WriteBehindChatMemoryStore}, {@code
 * dev.memlife.springai.WriteBehindChatMemoryRepository}): their builder's settings ({@link
 * dev.memlife.WriteBehindBuilder}), their report ({@link dev.memlife.WriteBehindReport}) and
 * their figures ({@link dev.memlife.WriteBehindFigures}). It is the innermost layer: it depends
 * on nothing of memlife but the unexported {@code dev.memlife.internal}, and every other package
 * depends on it, never the other way round.
 */
package dev.memlife;
