package io.homa.reactive.rpc;

import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.List;
import reactor.core.publisher.Flux;

/** Generic types for tests that register methods by hand, and messages shaped as the transport hands them out. */
public final class TestTypes {
    private TestTypes() {}

    /** {@code message} as a composite of 16 KiB arrays, as the transport hands out a long received message. */
    public static io.netty.buffer.ByteBuf chunked(byte[] message) {
        int chunkBytes = 16 * 1024;
        byte[][] chunks = new byte[(message.length + chunkBytes - 1) / chunkBytes][];
        for (int i = 0; i < chunks.length; i++) {
            chunks[i] = java.util.Arrays.copyOfRange(message, i * chunkBytes, Math.min(message.length, (i + 1) * chunkBytes));
        }
        return io.netty.buffer.Unpooled.wrappedBuffer(chunks);
    }

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
