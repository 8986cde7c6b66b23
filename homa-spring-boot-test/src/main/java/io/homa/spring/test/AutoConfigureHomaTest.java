package io.homa.spring.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * Runs a test's Homa endpoint as {@code @SpringBootTest(webEnvironment = RANDOM_PORT)} runs a web
 * server, and points the application's clients at it. On a test class (or an enclosing class of
 * a {@code @Nested} one), next to {@code @SpringBootTest} or a test slice:
 * <ul>
 *   <li>the endpoint binds a free port on loopback ({@code homa.server.port=0},
 *       {@code homa.server.bind-address=127.0.0.1}); inject the port with
 *       {@link io.homa.spring.LocalHomaPort @LocalHomaPort} ({@code local.homa.port});</li>
 *   <li>the application's declarative clients and its {@code HomaClient} call the services the
 *       application exports ({@code @HomaService} beans) on that endpoint, without
 *       {@code homa.client.peers} entries ({@code homa.client.local-services=*}). A service with a
 *       {@code homa.client.peers} entry still goes to its peers, and a service the application does
 *       not export is resolved as usual (peers, then Spring Cloud discovery);</li>
 *   <li>the starter's auto-configuration is imported, so a slice test gets the endpoint too.</li>
 * </ul>
 *
 * <p>These properties take precedence over the application's configuration ({@code application.yml},
 * profiles, {@code @SpringBootTest(args)}); the test's own inlined and dynamic properties
 * ({@code @SpringBootTest(properties)}, {@code @TestPropertySource(properties)},
 * {@code @DynamicPropertySource}) take precedence over them.
 *
 * <pre>{@code
 * @SpringBootTest
 * @AutoConfigureHomaTest
 * class GreetingServiceTests {
 *
 *     @Autowired
 *     GreetingClient client; // @HomaExchange(service = "greeting"), served by this application
 *
 *     @Test
 *     void greets() {
 *         assertThat(client.greet(new GreetingRequest("Ada")).block()).isEqualTo(new Greeting("Hello, Ada"));
 *     }
 * }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
public @interface AutoConfigureHomaTest {

    /**
     * The services the application's clients call on its own endpoint: names of services it
     * exports. Empty (the default): every service it exports.
     */
    String[] services() default {};

    /**
     * Whether the endpoint binds a free port on loopback. {@code false} keeps
     * {@code homa.server.port} and {@code homa.server.bind-address} as configured (as
     * {@code WebEnvironment.DEFINED_PORT} does); the clients then call the bound address, or
     * loopback when it is a wildcard.
     */
    boolean randomPort() default true;
}
