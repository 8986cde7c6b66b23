package io.homa.spring.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.CallOptions;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.RpcMethod;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/** One DEBUG line per failed call, on both sides. */
class HomaCallLoggingTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ListAppender<ILoggingEvent> clientLog = new ListAppender<>();

    private final ListAppender<ILoggingEvent> serverLog = new ListAppender<>();

    private LoopbackRpc rpc;

    private HomaClient client;

    @BeforeEach
    void start() {
        attach(HomaClientLoggingInterceptor.class, this.clientLog, Level.DEBUG);
        attach(HomaServerLoggingInterceptor.class, this.serverLog, Level.DEBUG);
        this.rpc = new LoopbackRpc();
        this.rpc.dispatcher()
                .register(RpcMethod.unary("kv", "get", new Type[] { String.class }, (args) -> Mono.just("v")))
                .register(RpcMethod.unary("kv", "put", new Type[] { String.class },
                        (args) -> Mono.error(new HomaException(HomaStatus.PERMISSION_DENIED, "read-only"))))
                .addInterceptor(new HomaServerLoggingInterceptor());
        this.client = this.rpc.client(List.of(new HomaClientLoggingInterceptor()), "kv");
    }

    @AfterEach
    void stop() {
        this.rpc.close();
        detach(HomaClientLoggingInterceptor.class, this.clientLog);
        detach(HomaServerLoggingInterceptor.class, this.serverLog);
    }

    @Test
    void shouldLogOneDebugLinePerFailedCall() {
        assertThat(call("get")).isEqualTo("v");
        assertThatThrownBy(() -> call("put")).isInstanceOf(HomaException.class);

        assertThat(this.clientLog.list).singleElement().satisfies((event) -> {
            assertThat(event.getLevel()).isEqualTo(Level.DEBUG);
            assertThat(event.getFormattedMessage()).startsWith("Homa call kv.put failed: status=PERMISSION_DENIED")
                    .containsPattern("durationMs=\\d+\\.\\d{3}").contains("read-only");
        });
        assertThat(this.serverLog.list).singleElement().satisfies((event) -> {
            assertThat(event.getLevel()).isEqualTo(Level.DEBUG);
            assertThat(event.getFormattedMessage()).startsWith("Homa call kv.put from /127.0.0.1:")
                    .contains("status=PERMISSION_DENIED").containsPattern("durationMs=\\d+\\.\\d{3}")
                    .contains("read-only");
        });
    }

    @Test
    void shouldStayQuietAboveDebug() {
        attach(HomaClientLoggingInterceptor.class, this.clientLog, Level.INFO);
        assertThatThrownBy(() -> call("put")).isInstanceOf(HomaException.class);
        assertThat(this.clientLog.list).isEmpty();
    }

    private String call(String method) {
        return this.client.<String>call("kv", method, new Object[] { "k" }, String.class, CallOptions.defaults())
                .block(WAIT);
    }

    private static void attach(Class<?> type, ListAppender<ILoggingEvent> appender, Level level) {
        Logger logger = (Logger) LoggerFactory.getLogger(type);
        logger.setLevel(level);
        logger.setAdditive(false);
        if (!appender.isStarted()) {
            appender.start();
            logger.addAppender(appender);
        }
    }

    private static void detach(Class<?> type, ListAppender<ILoggingEvent> appender) {
        Logger logger = (Logger) LoggerFactory.getLogger(type);
        logger.detachAppender(appender);
        logger.setLevel(null);
        logger.setAdditive(true);
    }
}
