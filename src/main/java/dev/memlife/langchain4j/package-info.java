/**
 * memlife under and over LangChain4j's chat memory (LangChain4j 1.19.0, an optional dependency:
 * add {@code dev.langchain4j:langchain4j-core}, or {@code dev.langchain4j:langchain4j}, which
 * brings it).
 *
 * <ul>
 *   <li><b>Under:</b> {@link dev.memlife.langchain4j.WriteBehindChatMemoryStore} is a {@code
 *       ChatMemoryStore} over any other. A chat memory's update returns at once; the latest state
 *       of each conversation is written behind, coalesced, read back before it is written, ordered
 *       with deletes, and flushed and drained within a deadline with a {@link
 *       dev.memlife.WriteBehindReport report} by memory id.
 *   <li><b>Over:</b> {@link dev.memlife.langchain4j.ChatMemoryStoreProvider} is a {@link
 *       dev.memlife.MemoryProvider} that appends every turn a memory manager delivers to a {@code
 *       ChatMemoryStore}, idempotently by write id.
 * </ul>
 *
 * <p>This is the only package of memlife that uses LangChain4j; nothing else in memlife depends
 * on it, so the rest of the jar loads and runs without LangChain4j on the class path or the
 * module path. It depends on the core {@code dev.memlife} (the provider interface, the turn, the
 * stopped exception) and on {@code langchain4j-core}.
 */
package dev.memlife.langchain4j;
