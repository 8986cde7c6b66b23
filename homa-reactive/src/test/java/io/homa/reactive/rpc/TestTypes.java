package io.homa.reactive.rpc;

import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.List;
import reactor.core.publisher.Flux;

/** Generic types for tests that register methods by hand. */
public final class TestTypes {
    private TestTypes() {}

    /** {@code Flux<element>}: the parameter type of a request stream. */
    public static ParameterizedType fluxOf(Type element) {
        return parameterized(Flux.class, element);
    }

    /** {@code List<element>}: a generic result type. */
    public static ParameterizedType listOf(Type element) {
        return parameterized(List.class, element);
    }

    /** {@code raw<element>}, a top-level generic type with one argument. */
    public static ParameterizedType parameterized(Class<?> raw, Type element) {
        return new ParameterizedType() {
            @Override
            public Type[] getActualTypeArguments() {
                return new Type[] {element};
            }

            @Override
            public Type getRawType() {
                return raw;
            }

            @Override
            public Type getOwnerType() {
                return null;
            }

            @Override
            public String getTypeName() {
                return raw.getName() + "<" + element.getTypeName() + ">";
            }

            @Override
            public String toString() {
                return getTypeName();
            }
        };
    }
}
