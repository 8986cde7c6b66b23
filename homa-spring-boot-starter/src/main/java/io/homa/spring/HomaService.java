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
 * (inherited methods and {@code Object}'s are not exported), each callable as
 * {@code HomaClient.call(service, methodName, argument, resultType)}. Rules, checked at start-up
 * (a violation fails it, naming the method):
 * <ul>
 *   <li>zero or one parameter; the argument is decoded (JSON by default) to the parameter's
 *       generic type;</li>
 *   <li>no two exported methods of one service share a name (no overloads);</li>
 *   <li>returns {@code Mono<T>} (passed on as is), a {@code CompletionStage<T>}, or a plain
 *       {@code T} or {@code void} (run on the dispatcher's scheduler, never on the event loop);
 *       other {@code Publisher}s (e.g. {@code Flux}) are not supported yet.</li>
 * </ul>
 * An exception thrown by a method reaches the caller as a
 * {@link io.homa.reactive.HomaRemoteException} with status {@code INTERNAL} and its message.
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
}
