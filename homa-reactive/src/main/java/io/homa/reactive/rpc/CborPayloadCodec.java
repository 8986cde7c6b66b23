package io.homa.reactive.rpc;

import tools.jackson.dataformat.cbor.CBORMapper;

/**
 * CBOR ({@code "cbor"}, RFC 8949) through Jackson: a compact binary format many languages read.
 *
 * <p>Needs {@value PayloadCodecs#CBOR_DEPENDENCY} on the classpath, an optional dependency of
 * homa-reactive (without it this class does not load; see {@link PayloadCodecs#isAvailable}).
 */
public final class CborPayloadCodec extends JacksonPayloadCodec {
    /** The name carried in request envelopes. */
    public static final String NAME = "cbor";

    /** A codec over a default {@code CBORMapper.builder().build()}. */
    public CborPayloadCodec() {
        this(CBORMapper.builder().build());
    }

    /** A codec over {@code mapper}. */
    public CborPayloadCodec(CBORMapper mapper) {
        super(NAME, "CBOR", mapper);
    }
}
