package io.homa.spring.reflection;

import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.ObjectMapper;

/**
 * The built-in service {@value #SERVICE}: describes what an {@link RpcDispatcher} exports, for
 * tools (the {@code homa} command-line client) and people, as gRPC's server reflection does.
 *
 * <p>Methods, called like any other ({@code homa.call("homa.reflection", "list", null,
 * ServiceListing.class)}):
 * <ul>
 *   <li>{@value #LIST}{@code ()} &rarr; {@link ServiceListing}: every service registered on the
 *       dispatcher at the time of the call, except this one, with each method's name, kind (unary or
 *       stream), idempotent flag, parameter names and Java types, result type, and a JSON Schema per
 *       parameter and result ({@link JsonSchemaGenerator}).
 * </ul>
 *
 * <p>The starter registers it (see {@code homa.server.reflection.enabled}); without Spring,
 * {@link #rpcMethods()} gives the methods to register on a dispatcher.
 */
public final class HomaReflectionService {

    /** The service name. */
    public static final String SERVICE = "homa.reflection";

    /** The method that lists the services. */
    public static final String LIST = "list";

    private final RpcDispatcher dispatcher;

    private final JsonSchemaGenerator schemas;

    private final BiFunction<String, String, @Nullable MethodSignature> signatures;

    /**
     * @param dispatcher the dispatcher whose methods are listed
     * @param schemaMapper the mapper whose serializers define the JSON form of the types (the JSON
     *     codec's)
     * @param signatures the Java signature of a service's method, by service and method name, or
     *     {@code null} when it has none (a method registered directly on the dispatcher); its result
     *     type is then listed as unknown
     */
    public HomaReflectionService(RpcDispatcher dispatcher, ObjectMapper schemaMapper,
            BiFunction<String, String, @Nullable MethodSignature> signatures) {
        this.dispatcher = Objects.requireNonNull(dispatcher, "dispatcher must not be null");
        this.schemas = new JsonSchemaGenerator(schemaMapper);
        this.signatures = Objects.requireNonNull(signatures, "signatures must not be null");
    }

    /** The services exported now (this one left out), sorted by name, their methods by name. */
    public ServiceListing list() {
        Map<String, List<RpcMethod>> byService = new TreeMap<>();
        for (RpcMethod method : this.dispatcher.methods()) {
            if (!method.service().equals(SERVICE)) {
                byService.computeIfAbsent(method.service(), (name) -> new ArrayList<>()).add(method);
            }
        }
        List<ServiceListing.Service> services = new ArrayList<>(byService.size());
        byService.forEach((service, methods) -> {
            methods.sort(Comparator.comparing(RpcMethod::method));
            services.add(new ServiceListing.Service(service, methods.stream().map(this::describe).toList()));
        });
        return new ServiceListing(JsonSchemaGenerator.DIALECT, services);
    }

    /**
     * The methods of this service, to register on the dispatcher: {@value #LIST}, unary and
     * idempotent, run on the dispatcher's scheduler (schema generation takes the event loop's time
     * otherwise).
     */
    public List<RpcMethod> rpcMethods() {
        return List.of(RpcMethod.unary(SERVICE, LIST, new Type[0], (arguments) -> Mono.fromCallable(this::list))
                .withIdempotent(true)
                .withBlocking(true));
    }

    private ServiceListing.Method describe(RpcMethod method) {
        MethodSignature signature = this.signatures.apply(method.service(), method.method());
        Type[] types = method.argumentTypes();
        List<String> names = (signature != null && signature.parameterNames().size() == types.length)
                ? signature.parameterNames() : List.of();
        List<ServiceListing.Parameter> parameters = new ArrayList<>(types.length);
        for (int i = 0; i < types.length; i++) {
            // The request stream (a Flux parameter): its items' schema.
            Type schemaType = (i == method.requestStreamIndex()) ? method.requestElementType() : types[i];
            parameters.add(new ServiceListing.Parameter(names.isEmpty() ? null : names.get(i), types[i].getTypeName(),
                    this.schemas.schema(schemaType)));
        }
        ServiceListing.TypeDescription result = null;
        if (signature != null) {
            Type type = signature.resultType();
            result = new ServiceListing.TypeDescription((type == Void.class) ? "void" : type.getTypeName(),
                    this.schemas.schema(type));
        }
        return new ServiceListing.Method(method.method(), method.kind().name().toLowerCase(Locale.ROOT),
                method.idempotent(), parameters, result);
    }
}
