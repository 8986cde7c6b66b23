package io.homa.reactive.rpc;

import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/** The default {@link PayloadCodec}: JSON ({@code "json"}) through a Jackson 3 {@link ObjectMapper}. */
public final class JsonPayloadCodec extends JacksonPayloadCodec {
    /** The name carried in request envelopes. */
    public static final String NAME = "json";

    /** A codec over a default {@code JsonMapper.builder().build()}. */
    public JsonPayloadCodec() {
        this(JsonMapper.builder().build());
    }

    /** A codec over {@code mapper} (e.g. the application's configured one). */
    public JsonPayloadCodec(ObjectMapper mapper) {
        super(NAME, "JSON", mapper);
    }
}
