package io.homa.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Maps exceptions thrown (or signalled) by {@link HomaService @HomaService} methods to the status
 * the caller sees, on a method of the service bean itself (applies to that service only, asked
 * first) or of a {@link HomaControllerAdvice @HomaControllerAdvice} bean (applies to all).
 *
 * <p>The method takes zero or one parameter: the exception (its type selects the exceptions
 * handled unless {@link #value()} lists them). It returns:
 * <ul>
 *   <li>a {@link io.homa.reactive.HomaStatus}: the caller gets that status and the exception's
 *       message;</li>
 *   <li>a {@link io.homa.reactive.HomaException}: the caller gets its status and message;</li>
 *   <li>{@code null}: not handled here; the next handler, or the default mapping, applies.</li>
 * </ul>
 * Among the handlers of one bean, the one whose exception type is closest to the thrown
 * exception's class wins. Whatever the mapping, the caller's
 * {@link io.homa.reactive.HomaRemoteException#remoteType()} names the exception thrown. A
 * {@link io.homa.reactive.HomaException} (which already carries a status) is only mapped by a
 * handler declared for {@code HomaException} or a subclass. Handler methods are not exported as
 * RPC methods. A handler that breaks these rules fails start-up, naming the method.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface HomaExceptionHandler {

    /** The exception types handled. Default: the type of the method's parameter. */
    Class<? extends Throwable>[] value() default {};
}
