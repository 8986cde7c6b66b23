package io.homa.spring.client;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.Import;

/**
 * Registers the listed {@link HomaExchange @HomaExchange} interfaces as beans (and those under
 * {@link #basePackages()}), on a {@code @Configuration} class; repeatable. Like
 * {@link EnableHomaClients @EnableHomaClients}, its presence turns off the scan of the
 * application's packages, so that only the imported clients exist. With nothing listed, the
 * package of the annotated class is scanned.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Repeatable(ImportHomaClients.Container.class)
@Import(HomaClientsRegistrar.class)
public @interface ImportHomaClients {

    /** Interfaces to register, each annotated {@code @HomaExchange}. */
    Class<?>[] value() default {};

    /** Packages to scan for {@code @HomaExchange} interfaces (sub-packages included). */
    String[] basePackages() default {};

    /** Container of repeated {@link ImportHomaClients} annotations. */
    @Target(ElementType.TYPE)
    @Retention(RetentionPolicy.RUNTIME)
    @Documented
    @Import(HomaClientsRegistrar.class)
    @interface Container {

        ImportHomaClients[] value();
    }
}
