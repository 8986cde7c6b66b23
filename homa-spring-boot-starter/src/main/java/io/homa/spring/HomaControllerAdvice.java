package io.homa.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.core.annotation.AliasFor;
import org.springframework.stereotype.Component;

/**
 * A bean whose {@link HomaExceptionHandler @HomaExceptionHandler} methods map the exceptions of
 * every {@link HomaService @HomaService} to statuses. A service's own handlers are asked first;
 * then the advice beans, in {@link org.springframework.core.annotation.Order @Order}; within one
 * bean, the handler for the most specific exception type wins.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Component
public @interface HomaControllerAdvice {

    /** The bean name (optional). */
    @AliasFor(annotation = Component.class, attribute = "value")
    String value() default "";
}
