package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.json.JsonMapper;

class PayloadCodecsTest {
    record Item(String name, int count, byte[] blob) {
        @Override
        public boolean equals(Object other) {
            return other instanceof Item that && name.equals(that.name) && count == that.count
                    && java.util.Arrays.equals(blob, that.blob);
        }

        @Override
        public int hashCode() {
            return name.hashCode();
        }
    }

    static Stream<PayloadCodec> codecs() {
        return Stream.of(new JsonPayloadCodec(), new SmilePayloadCodec(), new CborPayloadCodec());
    }

    @ParameterizedTest
    @MethodSource("codecs")
    void shouldRoundTripValuesGenericTypesAndNull(PayloadCodec codec) {
        Item item = new Item("ä", 3, new byte[] {1, 2, 3});
        Type listOfItems = TestTypes.listOf(Item.class);

        assertThat(codec.decode(codec.encode(item), Item.class)).isEqualTo(item);
        assertThat(codec.decode(codec.encode(List.of(item, item)), listOfItems)).isEqualTo(List.of(item, item));
        assertThat(codec.decode(codec.encode(null), Item.class)).isNull();
        assertThat(codec.decode(codec.encode(Instant.ofEpochSecond(5)), Instant.class))
                .isEqualTo(Instant.ofEpochSecond(5));
    }

    @ParameterizedTest
    @MethodSource("codecs")
    void shouldRoundTripZeroOneAndSeveralArguments(PayloadCodec codec) {
        Item item = new Item("x", 1, new byte[0]);
        Type listOfStrings = TestTypes.listOf(String.class);

        assertThat(codec.encodeArguments(new Object[0])).isEmpty();
        assertThat(codec.encodeArguments(null)).isEmpty();
        assertThat(codec.decodeArguments(new byte[0], new Type[0])).isEmpty();
        assertThat(codec.encodeArguments(new Object[] {item})).isEqualTo(codec.encode(item));
        assertThat(codec.decodeArguments(codec.encode(item), new Type[] {Item.class})).containsExactly(item);
        assertThat(codec.decodeArguments(new byte[0], new Type[] {Item.class})).containsExactly((Object) null);

        byte[] three = codec.encodeArguments(new @Nullable Object[] {item, 42L, null, List.of("a", "b")});
        @Nullable Object[] decoded =
                codec.decodeArguments(three, new Type[] {Item.class, long.class, String.class, listOfStrings});

        assertThat(decoded).containsExactly(item, 42L, null, List.of("a", "b"));
    }

    @ParameterizedTest
    @MethodSource("codecs")
    void shouldRejectWrongArgumentCountsWithInvalidArgument(PayloadCodec codec) {
        byte[] two = codec.encodeArguments(new Object[] {1, 2});

        assertThatThrownBy(() -> codec.decodeArguments(two, new Type[] {int.class, int.class, int.class}))
                .isInstanceOf(HomaException.class)
                .hasMessage("expected 3 arguments, got 2")
                .satisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.INVALID_ARGUMENT));
        assertThatThrownBy(() -> codec.decodeArguments(codec.encodeArguments(new Object[] {1, 2, 3}),
                        new Type[] {int.class, int.class}))
                .hasMessageContaining("expected 2 arguments, got more");
        assertThatThrownBy(() -> codec.decodeArguments(codec.encode("text"), new Type[] {int.class, int.class}))
                .isInstanceOf(HomaException.class)
                .hasMessageContaining("array of 2 arguments");
        assertThatThrownBy(() -> codec.decodeArguments(two, new Type[] {int.class, Item.class}))
                .isInstanceOf(HomaException.class)
                .satisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.INVALID_ARGUMENT));
    }

    @Test
    void shouldEncodeSeveralJsonArgumentsAsAJsonArray() {
        byte[] json = new JsonPayloadCodec().encodeArguments(new Object[] {"a", 1, true});

        assertThat(new String(json, StandardCharsets.UTF_8)).isEqualTo("[\"a\",1,true]");
    }

    @Test
    void shouldUseBinaryFormats() {
        Item item = new Item("name", 7, new byte[] {9, 9, 9, 9, 9, 9, 9, 9});

        byte[] smile = new SmilePayloadCodec().encode(item);
        byte[] cbor = new CborPayloadCodec().encode(item);

        assertThat(smile).startsWith(':', ')', '\n'); // Smile header
        assertThat(cbor[0] & 0xE0).isEqualTo(0xA0); // CBOR major type 5: map
        assertThat(cbor.length).isLessThan(new JsonPayloadCodec().encode(item).length);
    }

    @Test
    void shouldFrameSeveralArgumentsForCodecsWithoutArrays() {
        PayloadCodec plain = new PayloadCodec() {
            @Override
            public String name() {
                return "text";
            }

            @Override
            public byte[] encode(@Nullable Object value) {
                return String.valueOf(value).getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public Object decode(byte[] bytes, Type type) {
                return new String(bytes, StandardCharsets.UTF_8);
            }
        };

        byte[] encoded = plain.encodeArguments(new Object[] {"a", "bc"});

        assertThat(encoded).containsExactly(0, 0, 0, 2, 0, 0, 0, 1, 'a', 0, 0, 0, 2, 'b', 'c');
        assertThat(plain.decodeArguments(encoded, new Type[] {String.class, String.class})).containsExactly("a", "bc");
        assertThatThrownBy(() -> plain.decodeArguments(encoded, new Type[] {String.class, String.class, String.class}))
                .hasMessage("expected 3 arguments, got 2");
    }

    @Test
    void shouldLeaveOutEachBinaryCodecWhoseDataformatIsMissing() {
        ClassLoader withoutSmile = hiding("tools.jackson.dataformat.smile.");
        ClassLoader withoutEither = hiding("tools.jackson.dataformat.");

        assertThat(PayloadCodecs.defaults(JsonMapper.builder().build(), withoutSmile).names())
                .containsExactly("json", "cbor");
        assertThat(PayloadCodecs.defaults(JsonMapper.builder().build(), withoutEither).names())
                .containsExactly("json");
        assertThat(PayloadCodecs.isAvailable("json", withoutEither)).isTrue();
        assertThat(PayloadCodecs.isAvailable("smile", withoutSmile)).isFalse();
        assertThat(PayloadCodecs.isAvailable("cbor", withoutSmile)).isTrue();
        assertThat(PayloadCodecs.isAvailable("smile", null)).as("on this module's test classpath").isTrue();
        assertThat(PayloadCodecs.isAvailable("xml", null)).isFalse();
        assertThat(PayloadCodecs.requiredDependency("smile")).contains("tools.jackson.dataformat:jackson-dataformat-smile");
        assertThat(PayloadCodecs.requiredDependency("cbor")).contains("tools.jackson.dataformat:jackson-dataformat-cbor");
        assertThat(PayloadCodecs.requiredDependency("json")).isEmpty();
        assertThat(PayloadCodecs.requiredDependency("xml")).isEmpty();
    }

    /** A class loader that sees this test's classes except those whose name starts with {@code prefix}. */
    private static ClassLoader hiding(String prefix) {
        return new ClassLoader(PayloadCodecsTest.class.getClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                if (name.startsWith(prefix)) {
                    throw new ClassNotFoundException(name);
                }
                return super.loadClass(name, resolve);
            }
        };
    }

    @Test
    void shouldLookUpCodecsByNameAndListTheSupportedOnes() {
        PayloadCodecs codecs = PayloadCodecs.defaults();

        assertThat(codecs.names()).containsExactly("json", "smile", "cbor");
        assertThat(codecs.get("smile")).isInstanceOf(SmilePayloadCodec.class);
        assertThatThrownBy(() -> codecs.get("xml"))
                .isInstanceOf(HomaException.class)
                .hasMessage("codec 'xml' is not supported; supported: json, smile, cbor")
                .satisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.INVALID_ARGUMENT));
        assertThatThrownBy(() -> PayloadCodecs.of(new JsonPayloadCodec(), new JsonPayloadCodec()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("two codecs are named 'json'");
        assertThatThrownBy(PayloadCodecs::of).isInstanceOf(IllegalArgumentException.class);
    }

    /** A codec whose values are the bytes themselves, as a user's raw codec may be written. */
    static final class RawCodec implements PayloadCodec {
        @Override
        public String name() {
            return "raw";
        }

        @Override
        public byte[] encode(@Nullable Object value) {
            return (byte[]) value;
        }

        @Override
        public @Nullable Object decode(byte[] bytes, Type type) {
            return bytes;
        }

        @Override
        public byte[] encodeArguments(@Nullable Object @Nullable [] arguments) {
            return (byte[]) arguments[0];
        }

        @Override
        public @Nullable Object[] decodeArguments(byte[] bytes, int offset, int length, Type[] types) {
            return new Object[] {decode(bytes, offset, length, types[0])};
        }
    }

    @Test
    void shouldNeverHandAReceivedBuffersWholeArrayToTheValue() {
        // a received message's arrays are reused once it is released: a value must not be one of them
        byte[] chunk = {1, 2, 3, 4};
        PayloadCodec raw = new RawCodec();
        Object whole = raw.decode(io.netty.buffer.Unpooled.wrappedBuffer(chunk), byte[].class);
        assertThat(whole).isEqualTo(chunk).isNotSameAs(chunk);
        Object[] arguments = raw.decodeArguments(io.netty.buffer.Unpooled.wrappedBuffer(chunk), new Type[] {byte[].class});
        assertThat(arguments[0]).isEqualTo(chunk).isNotSameAs(chunk);
        Object part = raw.decode(io.netty.buffer.Unpooled.wrappedBuffer(chunk).skipBytes(1), byte[].class);
        assertThat(part).isEqualTo(new byte[] {2, 3, 4});
    }
}
