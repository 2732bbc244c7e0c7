package dev.memlife.springai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.StoppedException;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The write-behind repository as a bean of a real Spring application context: the context's
 * shutdown calls its {@code close()} (inferred from {@link AutoCloseable}), which drains what the
 * chat memory handed over before the context is gone.
 */
@Timeout(60)
class SpringContextShutdownTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Configuration(proxyBeanMethods = false)
    static class ChatMemoryConfiguration {

        @Bean
        SlowChatMemoryRepository slowRepository() {
            return new SlowChatMemoryRepository();
        }

        @Bean
        WriteBehindChatMemoryRepository writeBehindRepository(SlowChatMemoryRepository slowRepository) {
            return WriteBehindChatMemoryRepository.builder(slowRepository).name("spring-context").build();
        }

        @Bean
        ChatMemory chatMemory(WriteBehindChatMemoryRepository writeBehindRepository) {
            return MessageWindowChatMemory.builder().chatMemoryRepository(writeBehindRepository).maxMessages(10)
                    .build();
        }
    }

    @Test
    void closingTheContextDrainsWhatTheChatMemoryHandedOver() throws Exception {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(ChatMemoryConfiguration.class);
        SlowChatMemoryRepository slow = context.getBean(SlowChatMemoryRepository.class);
        WriteBehindChatMemoryRepository repository = context.getBean(WriteBehindChatMemoryRepository.class);
        ChatMemory memory = context.getBean(ChatMemory.class);
        try {
            slow.hold();
            memory.add("c1", new UserMessage("hi"));
            assertThat(slow.awaitEntered(WAIT)).as("c1's first save is held").isTrue();
            memory.add("c1", new AssistantMessage("hello"));
            memory.add("c2", new UserMessage("other"));

            CompletableFuture<Void> closed = CompletableFuture.runAsync(context::close);
            await().atMost(WAIT).until(() -> Thread.getAllStackTraces().values().stream()
                    .anyMatch(stack -> Arrays.stream(stack).anyMatch(f -> f.getMethodName().equals("stop")
                            && f.getClassName().startsWith("dev.memlife.")))); // the write-behind's own stop
            assertThat(closed).as("the context's close waits for the drain").isNotDone();
            slow.open();
            closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);

            assertThat(slow.stored("c1")).containsExactly("hi", "hello");
            assertThat(slow.stored("c2")).containsExactly("other");
            assertThat(repository.figures().pending()).isZero();
            assertThatThrownBy(() -> memory.add("c1", new UserMessage("late"))).isInstanceOf(StoppedException.class);
        } finally {
            slow.open();
            context.close();
        }
    }
}
