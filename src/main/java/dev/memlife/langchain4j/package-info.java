/**
 * memlife under and over LangChain4j's chat memory and embedding stores (LangChain4j 1.19.0, an
 * optional dependency: add {@code dev.langchain4j:langchain4j-core}, or {@code
 * dev.langchain4j:langchain4j}, which brings it).
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
 *   <li><b>Long-term memory, off the request path:</b> {@link
 *       dev.memlife.langchain4j.WriteBehindEmbeddingIngestor} takes text segments at once and
 *       embeds them behind, a batch per call to the {@code EmbeddingModel}, into an {@code
 *       EmbeddingStore}, with the same flush, bounded stop, report by segment id and optional
 *       spool. {@link dev.memlife.langchain4j.SemanticMemoryProvider} is a {@link
 *       dev.memlife.MemoryProvider} that embeds every batch of turns a memory manager delivers in
 *       one call into an {@code EmbeddingStore}, and recalls the earlier turns closest in meaning
 *       to the next message, optionally scoped per user.
 * </ul>
 *
 * <p>This is the only package of memlife that uses LangChain4j; nothing else in memlife depends
 * on it, so the rest of the jar loads and runs without LangChain4j on the class path or the
 * module path. It depends on the core {@code dev.memlife} (the provider interface, the turn, the
 * stopped exception) and on {@code langchain4j-core}.
 */
package dev.memlife.langchain4j;
