package io.homa.spring.client;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.core.annotation.AliasFor;

/**
 * Declares an interface as a client of a remote Homa service (the {@code @HttpExchange} /
 * {@code @RSocketExchange} pattern). The starter implements it and registers it as a bean: by
 * default every such interface in the application's packages (those of the
 * {@code @SpringBootApplication} class), or those that {@link EnableHomaClients @EnableHomaClients}
 * / {@link ImportHomaClients @ImportHomaClients} select. Inject it like any bean.
 *
 * <p>Each abstract method calls the remote method of the same name (or
 * {@link io.homa.spring.HomaMethod#name() @HomaMethod(name)}) with the method's arguments (zero,
 * one or several; POJOs and records travel through the codec). The return type decides how:
 * <ul>
 *   <li>{@code Mono<T>}: one call per subscription, lazily; {@code Mono<Void>} for no result;</li>
 *   <li>{@code Flux<T>}: a server stream; the client fetches items as its subscriber demands
 *       them, and cancelling stops the server's stream;</li>
 *   <li>{@code CompletableFuture<T>} / {@code CompletionStage<T>}: the call starts at once;</li>
 *   <li>plain {@code T} or {@code void}: a blocking call, which returns when the call ends (or
 *       throws its error); never call it on a Reactor non-blocking thread (for example inside a
 *       {@code Mono} operator on an event loop), Reactor refuses it there.</li>
 * </ul>
 * Errors: {@link io.homa.reactive.HomaRemoteException} with the server's status, message and
 * exception type; {@link io.homa.reactive.HomaException} with DEADLINE_EXCEEDED when the
 * deadline passes, UNAVAILABLE when no peer is known.
 *
 * <p>Deadline of each method, first set wins: {@code homa.client.services.<service>.methods.<method>.timeout},
 * {@code homa.client.services.<service>.timeout}, {@link io.homa.spring.HomaMethod#timeout()},
 * {@link #timeout()}, {@code homa.client.default-timeout}. Codec: {@code homa.client.services.<service>.codec},
 * {@link #codec()}, {@code homa.client.codec}. Default and {@code Object} methods are not remote:
 * default methods run as written; {@code toString} describes the client; {@code equals} and
 * {@code hashCode} are identity-based.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface HomaExchange {

    /** Alias for {@link #service()}. */
    @AliasFor("service")
    String value() default "";

    /**
     * The remote service's name (as in {@code @HomaService(name)}); required; {@code ${...}}
     * placeholders are resolved.
     */
    @AliasFor("value")
    String service() default "";

    /**
     * The codec of this client's calls (json, smile, cbor, or the name of a PayloadCodec bean).
     * Default: {@code homa.client.codec}; {@code homa.client.services.<service>.codec} overrides it.
     */
    String codec() default "";

    /**
     * Deadline of this client's calls, as a duration string ({@code "2s"}, {@code "PT2S"}; a plain
     * number means milliseconds; {@code "0"} = no deadline). Default: {@code homa.client.default-timeout};
     * {@link io.homa.spring.HomaMethod#timeout()} and the {@code homa.client.services.<service>} settings
     * override it.
     */
    String timeout() default "";
}
