package io.homa.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.core.annotation.AliasFor;
import org.springframework.stereotype.Component;

/**
 * Exports a bean's methods over Homa. The annotated class is a {@link Component @Component}, so
 * component scanning picks it up.
 *
 * <p>Exported methods: every public instance method declared by the bean's class itself
 * (inherited methods, {@code Object}'s, container callbacks and
 * {@link HomaExceptionHandler @HomaExceptionHandler} methods are not exported), or with
 * {@link #exportAll() exportAll = false} only those annotated {@link HomaMethod @HomaMethod}
 * (so that public helpers stay private to the application), each callable as
 * {@code service.method} with {@code HomaClient} or through a declarative client
 * ({@link io.homa.spring.client.HomaExchange @HomaExchange}). Rules, checked at start-up (a
 * violation fails it, naming the method):
 * <ul>
 *   <li>any number of parameters; the arguments are decoded with the request's codec (JSON,
 *       Smile or CBOR through Jackson) to the parameters' generic types, so POJOs, records and
 *       collections work; a missing argument for a primitive parameter is INVALID_ARGUMENT;</li>
 *   <li>the RPC method name is the Java name or {@link HomaMethod#name() @HomaMethod(name)};
 *       {@link HomaMethod#idempotent() @HomaMethod(idempotent = true)} marks it idempotent; no
 *       two exported methods of one service share an RPC name (no overloads);</li>
 *   <li>return types: {@code Mono<T>} (passed on as is), {@code Flux<T>} or another
 *       {@code Publisher} (a server stream: the client pulls items as it demands them),
 *       {@code CompletionStage<T>}: these are called on the transport's event loop, with no
 *       thread hop (as WebFlux and RSocket call reactive handlers), so they must not block; or a
 *       plain {@code T} or {@code void}: those run on the {@code homaServerScheduler}
 *       ({@code homa.server.threads}, {@code homa.server.queue-capacity}; virtual threads with
 *       {@code spring.threads.virtual.enabled} on JDK 21+), never on the event loop, so they
 *       may block. A request longer than {@code homa.server.offload-size} is decoded and run on
 *       that scheduler whatever the method returns.</li>
 * </ul>
 * An exception thrown by a method reaches the caller as a
 * {@link io.homa.reactive.HomaRemoteException} with its class name as
 * {@code remoteType()} and, unless an {@link HomaExceptionHandler @HomaExceptionHandler} maps it
 * (on this bean first, then on {@link HomaControllerAdvice @HomaControllerAdvice} beans), status
 * {@code INTERNAL} with {@code "Type: message"}; a {@link io.homa.reactive.HomaException} keeps
 * its own status.
 *
 * <p>Exports happen only while {@code homa.server.enabled} is {@code true} (the default).
 *
 * @see HomaAutoConfiguration
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Component
public @interface HomaService {

    /**
     * Alias for {@link #name()}.
     */
    @AliasFor(annotation = Component.class, attribute = "value")
    String value() default "";

    /**
     * The service name callers use. Default: the simple name of the bean's class (for example
     * {@code "EchoService"} for {@code com.example.EchoService}). Also used as the bean name,
     * as for any {@code @Component} with a name; service names must be unique.
     */
    @AliasFor(annotation = Component.class, attribute = "value")
    String name() default "";

    /**
     * Whether every public method the class declares is exported ({@code true}, the default), or
     * only its {@link HomaMethod @HomaMethod} methods ({@code false}). The start-up INFO line of
     * the endpoint lists what is exported either way.
     */
    boolean exportAll() default true;
}
