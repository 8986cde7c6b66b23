package io.homa.spring.client;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.AliasFor;

/**
 * Selects which {@link HomaExchange @HomaExchange} interfaces become beans, on a
 * {@code @Configuration} class. Without it (and without
 * {@link ImportHomaClients @ImportHomaClients}) the starter scans the application's packages;
 * with it, only what it selects is registered: the {@link #clients()} listed plus the interfaces
 * found under {@link #basePackages()} and {@link #basePackageClasses()}; when all three are empty,
 * the package of the annotated class is scanned.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Import(HomaClientsRegistrar.class)
public @interface EnableHomaClients {

    /** Alias for {@link #basePackages()}. */
    @AliasFor("basePackages")
    String[] value() default {};

    /** Packages to scan for {@code @HomaExchange} interfaces (sub-packages included). */
    @AliasFor("value")
    String[] basePackages() default {};

    /** Type-safe {@link #basePackages()}: the package of each class is scanned. */
    Class<?>[] basePackageClasses() default {};

    /** Interfaces to register, each annotated {@code @HomaExchange}. */
    Class<?>[] clients() default {};
}
