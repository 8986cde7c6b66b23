package io.homa.reactive.rpc;

import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import reactor.core.publisher.Flux;

/** Generic types for tests that register methods by hand. */
public final class TestTypes {
    private TestTypes() {}

    /** {@code Flux<element>}: the parameter type of a request stream. */
    public static ParameterizedType fluxOf(Type element) {
        return new ParameterizedType() {
            @Override
            public Type[] getActualTypeArguments() {
                return new Type[] {element};
            }

            @Override
            public Type getRawType() {
                return Flux.class;
            }

            @Override
            public Type getOwnerType() {
                return null;
            }

            @Override
            public String getTypeName() {
                return Flux.class.getName() + "<" + element.getTypeName() + ">";
            }

            @Override
            public String toString() {
                return getTypeName();
            }
        };
    }
}
