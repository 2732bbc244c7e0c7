package dev.memlife.readme;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.WriteBehindReport;
import dev.memlife.springai.WriteBehindChatMemoryRepository;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.memory.InMemoryChatMemoryRepository;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The Spring AI guide's two examples (docs/spring-ai.md), as written there: the repository in
 * plain Java, and as beans whose context's shutdown drains it.
 */
@Timeout(60)
class SpringAiReadmeExampleTest {

    @Test
    void underAChatMemoryTheWriteBehindRepositoryWritesBehindReadsBackAndDrains() {
        ChatMemoryRepository myRepository = new InMemoryChatMemoryRepository();
        String conversationId = "user-7";

        WriteBehindChatMemoryRepository repository = WriteBehindChatMemoryRepository.builder(myRepository)
                .name("chat")                          // its writer thread: memlife-chat-writer-chat
                .closeTimeout(Duration.ofSeconds(5))   // close()'s budget
                .build();
        ChatMemory memory = MessageWindowChatMemory.builder()
                .chatMemoryRepository(repository).maxMessages(20).build();

        memory.add(conversationId, new UserMessage("hi"));   // returns at once: written behind, coalesced
        memory.get(conversationId);                          // read-your-writes, before myRepository has it
        repository.findConversationIds();                    // lists it too
        boolean written = repository.flush(Duration.ofSeconds(2));   // true once all of it is in myRepository

        WriteBehindReport<String> report = repository.stop(Duration.ofSeconds(5));   // at shutdown: drain, report
        System.out.println(report);

        assertThat(written).isTrue();
        assertThat(myRepository.findByConversationId(conversationId)).containsExactly(new UserMessage("hi"));
        assertThat(report.complete()).isTrue();
    }

    /** The guide's bean example; {@code jdbcRepository} stands for any repository bean. */
    @Configuration(proxyBeanMethods = false)
    static class ChatMemoryConfig {

        @Bean
        InMemoryChatMemoryRepository jdbcRepository() {
            return new InMemoryChatMemoryRepository();
        }

        @Bean   // close() is inferred as its destroy method: the context's shutdown drains it (5 s)
        WriteBehindChatMemoryRepository writeBehindRepository(InMemoryChatMemoryRepository jdbcRepository) {
            return WriteBehindChatMemoryRepository.over(jdbcRepository);
        }

        @Bean
        ChatMemory chatMemory(WriteBehindChatMemoryRepository writeBehindRepository) {
            return MessageWindowChatMemory.builder().chatMemoryRepository(writeBehindRepository)
                    .maxMessages(20).build();
        }
    }

    @Test
    void asBeansTheContextsShutdownDrainsTheRepository() {
        InMemoryChatMemoryRepository behind;
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(ChatMemoryConfig.class)) {
            behind = context.getBean(InMemoryChatMemoryRepository.class);
            context.getBean(ChatMemory.class).add("user-7", new UserMessage("hi"));
        }
        assertThat(behind.findByConversationId("user-7")).containsExactly(new UserMessage("hi"));
    }
}
