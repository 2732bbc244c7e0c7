/**
 * memlife under Spring AI's chat memory (Spring AI 1.1.2, an optional dependency: add {@code
 * org.springframework.ai:spring-ai-model}, which any Spring AI model or starter brings; the {@code
 * ChatMemoryRepository} interface is the same in Spring AI 2.0.1).
 *
 * <p>{@link dev.memlife.springai.WriteBehindChatMemoryRepository} is a {@code
 * ChatMemoryRepository} over any other: a {@code MessageWindowChatMemory} built over it returns
 * from {@code add} at once; the latest state of each conversation is written behind, coalesced,
 * read back before it is written (conversation listing included), ordered with deletes, and
 * flushed and drained within a deadline with a {@link dev.memlife.WriteBehindReport
 * report} by conversation id. It shares its write-behind engine with {@code
 * dev.memlife.langchain4j.WriteBehindChatMemoryStore}.
 *
 * <p>This is the only package of memlife that uses Spring AI; nothing else in memlife depends on
 * it, so the rest of the jar loads and runs without Spring AI on the class path or the module
 * path.
 */
package dev.memlife.springai;
