package io.homa.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.beans.factory.annotation.Value;

/**
 * Injects the UDP port the Homa endpoint bound ({@code local.homa.port}), for tests that run the
 * application with {@code homa.server.port: 0}; the Homa twin of Spring Boot's
 * {@code @LocalServerPort}.
 */
@Target({ ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Value("${" + HomaAutoConfiguration.LOCAL_PORT_PROPERTY + "}")
public @interface LocalHomaPort {
}
