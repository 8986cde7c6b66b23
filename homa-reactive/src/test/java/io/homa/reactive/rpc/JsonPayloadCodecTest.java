package io.homa.reactive.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class JsonPayloadCodecTest {
    record Item(String name, int count) {}

    /** Its only property cannot be read. */
    public static final class Opaque {
        public String getValue() {
            throw new IllegalStateException("unreadable");
        }
    }

    private final JsonPayloadCodec codec = new JsonPayloadCodec();

    @Test
    void shouldBeNamedJson() {
        assertThat(codec.name()).isEqualTo("json");
    }

    @Test
    void shouldRoundTripRecord() {
        byte[] json = codec.encode(new Item("apple", 3));

        assertThat(new String(json, StandardCharsets.UTF_8)).isEqualTo("{\"name\":\"apple\",\"count\":3}");
        assertThat(codec.decode(json, Item.class)).isEqualTo(new Item("apple", 3));
    }

    @Test
    void shouldDecodeGenericTypes() {
        Type listOfItems = TestTypes.listOf(Item.class);
        byte[] json = codec.encode(List.of(new Item("a", 1), new Item("b", 2)));

        assertThat(codec.decode(json, listOfItems)).isEqualTo(List.of(new Item("a", 1), new Item("b", 2)));
    }

    @Test
    void shouldEncodeNullAsJsonNullAndDecodeItBack() {
        byte[] json = codec.encode(null);

        assertThat(new String(json, StandardCharsets.UTF_8)).isEqualTo("null");
        assertThat(codec.decode(json, Item.class)).isNull();
    }

    @Test
    void shouldFailWithInvalidArgumentOnBadJson() {
        assertThatThrownBy(() -> codec.decode("{\"name\":".getBytes(StandardCharsets.UTF_8), Item.class))
                .isInstanceOf(HomaException.class)
                .hasMessageContaining("cannot decode JSON as " + Item.class.getName())
                .satisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.INVALID_ARGUMENT));
        assertThatThrownBy(() -> codec.decode("\"text\"".getBytes(StandardCharsets.UTF_8), Integer.class))
                .isInstanceOf(HomaException.class)
                .satisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.INVALID_ARGUMENT));
    }

    @Test
    void shouldFailWithInternalWhenValueCannotBeEncoded() {
        assertThatThrownBy(() -> codec.encode(new Opaque()))
                .isInstanceOf(HomaException.class)
                .hasMessageContaining("cannot encode " + Opaque.class.getName() + " as JSON")
                .satisfies(e -> assertThat(((HomaException) e).status()).isEqualTo(HomaStatus.INTERNAL));
    }

    @Test
    void shouldUseTheInjectedMapper() {
        JsonMapper mapper = JsonMapper.builder().build();
        JsonPayloadCodec injected = new JsonPayloadCodec(mapper);

        assertThat(injected.mapper()).isSameAs(mapper);
        assertThat(injected.decode(injected.encode(Map.of("k", 1)), Map.class)).isEqualTo(Map.of("k", 1));
    }

    @Test
    void shouldCarryByteArraysRawBehindOneTagByteInEveryJacksonCodec() {
        byte[] payload = new byte[1000];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) i;
        }
        for (PayloadCodec each : List.of(codec, new SmilePayloadCodec(), new CborPayloadCodec())) {
            byte[] encoded = each.encode(payload);

            assertThat(encoded).as(each.name()).hasSize(payload.length + 1);
            assertThat(encoded[0]).isEqualTo((byte) 0xFF);
            assertThat((byte[]) each.decode(encoded, byte[].class)).as(each.name()).isEqualTo(payload);
            assertThat((byte[]) each.decode(each.encode(new byte[0]), byte[].class)).isEmpty();
            assertThat(each.decode(each.encode(null), byte[].class)).as("null stays null").isNull();
            assertThat((byte[]) each.decodeArguments(each.encodeArguments(new Object[] {payload}), new Type[] {byte[].class})[0])
                    .isEqualTo(payload);
            Object[] two = each.decodeArguments(each.encodeArguments(new Object[] {payload, "x"}),
                    new Type[] {byte[].class, String.class});
            assertThat((byte[]) two[0]).as("inside an argument array: the format's own binary").isEqualTo(payload);
            assertThat(two[1]).isEqualTo("x");
        }
    }

    @Test
    void shouldStillDecodeABase64StringAsByteArrayAndRejectRawBytesForAnotherType() {
        byte[] base64 = "\"AAEC\"".getBytes(StandardCharsets.UTF_8);

        assertThat((byte[]) codec.decode(base64, byte[].class)).containsExactly(0, 1, 2);
        assertThatThrownBy(() -> codec.decode(codec.encode(new byte[] {1, 2}), String.class))
                .isInstanceOfSatisfying(HomaException.class,
                        e -> assertThat(e.status()).isEqualTo(HomaStatus.INVALID_ARGUMENT));
    }

    /** {@code bytes} inside a larger array, with junk on both sides, as a payload sits in a message. */
    private static byte[] embedded(byte[] bytes, int before, int after) {
        byte[] message = new byte[before + bytes.length + after];
        java.util.Arrays.fill(message, (byte) '{');
        System.arraycopy(bytes, 0, message, before, bytes.length);
        return message;
    }

    @Test
    void shouldDecodeValuesAndArgumentsFromARangeOfALargerArrayInEveryCodec() {
        byte[] payload = {5, 6, 7};
        PayloadCodec framed = new PayloadCodec() { // the interface's defaults: frames, copies of the range
            @Override
            public String name() {
                return "framed";
            }

            @Override
            public byte[] encode(Object value) {
                return codec.encode(value);
            }

            @Override
            public Object decode(byte[] bytes, Type type) {
                return codec.decode(bytes, type);
            }
        };
        for (PayloadCodec each : List.of(codec, new SmilePayloadCodec(), new CborPayloadCodec(), framed)) {
            byte[] item = each.encode(new Item("apple", 3));
            assertThat(each.decode(embedded(item, 7, 5), 7, item.length, Item.class)).as(each.name())
                    .isEqualTo(new Item("apple", 3));
            byte[] raw = each.encode(payload);
            assertThat((byte[]) each.decode(embedded(raw, 3, 2), 3, raw.length, byte[].class)).as(each.name())
                    .containsExactly(5, 6, 7);
            byte[] arguments = each.encodeArguments(new Object[] {new Item("pear", 1), "x"});
            assertThat(each.decodeArguments(embedded(arguments, 4, 4), 4, arguments.length,
                    new Type[] {Item.class, String.class})).as(each.name()).containsExactly(new Item("pear", 1), "x");
            assertThat(each.decodeArguments(embedded(new byte[0], 4, 4), 4, 0, new Type[] {Item.class}))
                    .as("an empty payload is a null argument").containsExactly((Object) null);
            assertThatThrownBy(() -> each.decode(item, 1, item.length, Item.class))
                    .isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    @Test
    void shouldEncodeARawByteArrayAsItsTagAndItselfAndDecodeItOutOfChunksOnce() {
        byte[] payload = new byte[100_000];
        new java.util.Random(7).nextBytes(payload);
        for (PayloadCodec each : List.of(new JsonPayloadCodec(), new SmilePayloadCodec(), new CborPayloadCodec())) {
            byte[][] parts = each.encodeParts(payload);
            assertThat(parts.length).as(each.name()).isEqualTo(2);
            assertThat(parts[1]).as("the array itself, not a copy").isSameAs(payload);
            assertThat(io.homa.engine.MessageBytes.join(parts)).as("the same bytes as encode")
                    .isEqualTo(each.encode(payload));
            assertThat(each.encodeArgumentParts(new Object[] {payload})[1]).isSameAs(payload);

            // Received as 16 KiB chunks (a composite buffer): one copy, straight into the result.
            io.netty.buffer.ByteBuf chunks = TestTypes.chunked(io.homa.engine.MessageBytes.join(parts));
            assertThat(chunks.hasArray()).isFalse();
            assertThat((byte[]) each.decode(chunks, byte[].class)).as(each.name()).isEqualTo(payload);
            assertThat(each.decodeArguments(chunks, new Type[] {byte[].class})[0]).isEqualTo(payload);
            assertThat(chunks.readerIndex()).as("indices unchanged").isZero();

            // Values that are not raw bytes decode from the chunks too.
            Item item = new Item("x".repeat(40_000), 9);
            assertThat(each.encodeParts(item)).hasNumberOfRows(1);
            assertThat(each.decode(TestTypes.chunked(each.encode(item)), Item.class)).isEqualTo(item);
            byte[] two = each.encodeArguments(new Object[] {item, "y"});
            assertThat(each.decodeArguments(TestTypes.chunked(two), new Type[] {Item.class, String.class})).containsExactly(item, "y");
        }
    }

}
