package io.homa.spring.reflection;

import io.homa.reactive.rpc.HomaCallContext;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import org.reactivestreams.Publisher;
import org.springframework.core.GenericTypeResolver;
import org.springframework.core.ResolvableType;

/**
 * What the Java method behind an exported RPC method declares beyond its
 * {@link io.homa.reactive.rpc.RpcMethod}: the type of its result and the names of its parameters.
 *
 * @param resultType the type of the value the caller receives: {@code T} of a {@code Mono<T>},
 *     {@code CompletionStage<T>} or plain {@code T}, the item type {@code T} of a {@code Flux<T>}
 *     (any {@code Publisher<T>}), {@code void.class} for {@code void} (a {@code Mono<Void>} gives
 *     {@code Void.class}); type variables the service class fixes are resolved
 * @param parameterNames the parameter names in order, or empty when the class was compiled without
 *     {@code -parameters}
 */
public record MethodSignature(Type resultType, List<String> parameterNames) {

    /** Copies the names. */
    public MethodSignature {
        Objects.requireNonNull(resultType, "resultType must not be null");
        parameterNames = List.copyOf(parameterNames);
    }

    /**
     * The signature of {@code method} as exported from {@code userClass}.
     *
     * @param method a method declared by {@code userClass} (or inherited by it)
     * @param userClass the service class, against which type variables are resolved
     */
    public static MethodSignature of(Method method, Class<?> userClass) {
        Class<?> raw = method.getReturnType();
        Type resultType;
        if (Publisher.class.isAssignableFrom(raw)) {
            resultType = typeArgument(method, userClass, Publisher.class);
        }
        else if (CompletionStage.class.isAssignableFrom(raw)) {
            resultType = typeArgument(method, userClass, CompletionStage.class);
        }
        else {
            resultType = GenericTypeResolver.resolveType(method.getGenericReturnType(), userClass);
        }
        List<String> names = new ArrayList<>();
        for (Parameter parameter : method.getParameters()) {
            if (parameter.getType() == HomaCallContext.class) {
                continue; // filled in from the call, not a wire argument
            }
            if (!parameter.isNamePresent()) {
                names.clear();
                break;
            }
            names.add(parameter.getName());
        }
        return new MethodSignature(resultType, names);
    }

    /**
     * The item type of a method returning {@code Mono<T>}, {@code Flux<T>}, {@code CompletionStage<T>}
     * and the like: the return type's one type argument (a wildcard's upper bound), resolved against
     * the service class; else, for a subtype with other type parameters, {@code container}'s type
     * argument as far as it resolves to a class.
     */
    private static Type typeArgument(Method method, Class<?> userClass, Class<?> container) {
        if (method.getGenericReturnType() instanceof ParameterizedType parameterized
                && parameterized.getActualTypeArguments().length == 1) {
            Type argument = parameterized.getActualTypeArguments()[0];
            if (argument instanceof WildcardType wildcard) {
                argument = wildcard.getUpperBounds()[0];
            }
            Type resolved = GenericTypeResolver.resolveType(argument, userClass);
            return (resolved instanceof TypeVariable<?>) ? Object.class : resolved;
        }
        Class<?> resolved = ResolvableType.forMethodReturnType(method, userClass).as(container).resolveGeneric(0);
        return (resolved != null) ? resolved : Object.class;
    }
}
