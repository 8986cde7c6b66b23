package io.homa.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.core.annotation.AliasFor;

/**
 * Settings of one RPC method, on either side of the wire:
 * <ul>
 *   <li>on a method of a {@link HomaService @HomaService} bean: the name it is exported under and
 *       whether it is idempotent;</li>
 *   <li>on a method of a {@link io.homa.spring.client.HomaExchange @HomaExchange} interface: the
 *       remote method it calls, its deadline, and whether it is idempotent (only idempotent calls
 *       may be retried, for example by a Resilience4j retry: retrying any other call could
 *       execute it twice, breaking Homa's at-most-once guarantee).</li>
 * </ul>
 * The annotation is optional: without it the Java method name is the RPC method name.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface HomaMethod {

    /** Alias for {@link #name()}. */
    @AliasFor("name")
    String value() default "";

    /** The RPC method name. Default: the Java method's name. */
    @AliasFor("value")
    String name() default "";

    /**
     * Deadline of calls through a declarative client, as a duration string ({@code "500ms"},
     * {@code "2s"}, ISO-8601 {@code "PT2S"}; a plain number means milliseconds; {@code "0"} = no
     * deadline); {@code ${...}} placeholders are resolved. Default: unset, so the service's
     * setting applies. {@code homa.client.services.<service>.methods.<method>.timeout} and
     * {@code homa.client.services.<service>.timeout} override it. Ignored on the service side,
     * which takes its deadline from the request.
     */
    String timeout() default "";

    /**
     * Whether executing the method twice has the same effect as once, so that a failed call may
     * be retried.
     */
    boolean idempotent() default false;
}
