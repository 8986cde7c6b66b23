package io.homa.spring.reflection;

import java.util.List;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The answer of {@code homa.reflection.list}: every service the endpoint exports (except the
 * reflection service itself), sorted by name.
 *
 * @param schemaDialect the JSON Schema dialect of the schemas ({@value JsonSchemaGenerator#DIALECT})
 * @param services the services, sorted by name
 */
public record ServiceListing(String schemaDialect, List<Service> services) {

    public ServiceListing {
        services = List.copyOf(services);
    }

    /**
     * One exported service.
     *
     * @param name the service name callers use
     * @param methods its methods, sorted by name
     */
    public record Service(String name, List<Method> methods) {

        public Service {
            methods = List.copyOf(methods);
        }
    }

    /**
     * One exported method.
     *
     * @param name the method name callers use
     * @param kind {@code "unary"} (one result) or {@code "stream"} (a stream of items, fetched with
     *     {@code HomaClient.stream}); the lower-case name of its {@code RpcMethod.Kind}
     * @param idempotent whether running it twice is harmless ({@code @HomaMethod(idempotent = true)})
     * @param parameters its parameters, in order
     * @param result what the caller receives (each item, for a stream), or {@code null} when the
     *     method was registered without a Java signature (directly on the {@code RpcDispatcher})
     */
    public record Method(String name, String kind, boolean idempotent, List<Parameter> parameters,
            @Nullable TypeDescription result) {

        public Method {
            parameters = List.copyOf(parameters);
        }
    }

    /**
     * One parameter.
     *
     * @param name the parameter's name in the Java method, or {@code null} when not known
     * @param type the Java type name, e.g. {@code java.lang.String} or {@code java.util.List<com.example.Item>}
     * @param schema the JSON Schema of the JSON value that decodes to the type
     */
    public record Parameter(@Nullable String name, String type, JsonNode schema) {
    }

    /**
     * A result type.
     *
     * @param type the Java type name ({@code void} for none)
     * @param schema the JSON Schema of its JSON form ({@code {"type":"null"}} for {@code void})
     */
    public record TypeDescription(String type, JsonNode schema) {
    }
}
