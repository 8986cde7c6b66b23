package io.homa.spring.reflection;

import java.lang.reflect.Type;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.databind.BeanProperty;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.SerializationContext;
import tools.jackson.databind.jsonFormatVisitors.JsonAnyFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonArrayFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonBooleanFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonFormatTypes;
import tools.jackson.databind.jsonFormatVisitors.JsonFormatVisitable;
import tools.jackson.databind.jsonFormatVisitors.JsonFormatVisitorWrapper;
import tools.jackson.databind.jsonFormatVisitors.JsonIntegerFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonMapFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonNullFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonNumberFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonObjectFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonStringFormatVisitor;
import tools.jackson.databind.jsonFormatVisitors.JsonValueFormat;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * JSON Schemas (draft 2020-12 keywords) of Java types as a Jackson 3 {@link ObjectMapper}
 * serializes them, built from the mapper's own format visitors
 * ({@link ObjectMapper#acceptJsonFormatVisitor(JavaType, JsonFormatVisitorWrapper)}), so that
 * naming strategies, {@code @JsonProperty}, {@code @JsonIgnore}, enums written by
 * {@code toString} and the like are honoured. Thread-safe.
 *
 * <p>What a type becomes:
 * <ul>
 *   <li>a bean or record: {@code {"type":"object","properties":{...},"required":[...]}} (required:
 *       the properties Jackson reports as required, e.g. {@code @JsonProperty(required = true)});
 *   <li>an array or collection: {@code {"type":"array","items":{...}}};
 *   <li>a map: {@code {"type":"object","additionalProperties":{...}}};
 *   <li>a string: {@code {"type":"string"}}, with {@code "enum"} for an enum and {@code "format"}
 *       where Jackson names one ({@code "uuid"}, {@code "date-time"}, ...);
 *   <li>a number: {@code {"type":"integer"}} with format {@code int32} or {@code int64}, or
 *       {@code {"type":"number"}} with format {@code float} or {@code double} (OpenAPI's formats);
 *   <li>{@code boolean}: {@code {"type":"boolean"}}; {@code void}/{@code Void}: {@code {"type":"null"}};
 *   <li>{@code byte[]}: {@code {"type":"string","contentEncoding":"base64"}} (what a JSON peer
 *       sends for it);
 *   <li>{@code Object}, {@code JsonNode} and anything Jackson cannot describe: {@code {}} (any value).
 * </ul>
 * A type that contains itself (a tree node) is put under {@code "$defs"} of the returned schema,
 * named by its simple class name, and referred to with {@code {"$ref":"#/$defs/Name"}}; every
 * other type is written inline.
 */
public final class JsonSchemaGenerator {

    /** The JSON Schema dialect whose keywords the schemas use. */
    public static final String DIALECT = "https://json-schema.org/draft/2020-12/schema";

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final ObjectMapper mapper;

    /**
     * @param mapper the mapper whose serializers define the JSON form of each type (use the one that
     *     encodes the payloads, e.g. the JSON codec's)
     */
    public JsonSchemaGenerator(ObjectMapper mapper) {
        this.mapper = Objects.requireNonNull(mapper, "mapper must not be null");
    }

    /**
     * The schema of {@code type}.
     *
     * @param type a class or a generic type (a {@code ParameterizedType} such as {@code List<Item>});
     *     type variables that are not resolved count as {@code Object}
     * @return a new schema object, never {@code null}; {@code {}} when Jackson cannot describe the
     *     type (then with a {@code "description"} saying why)
     */
    public ObjectNode schema(Type type) {
        Objects.requireNonNull(type, "type must not be null");
        Generation generation = new Generation();
        ObjectNode schema;
        try {
            schema = generation.schemaOf(this.mapper.getTypeFactory().constructType(type), null, null);
        }
        catch (JacksonException | IllegalArgumentException ex) {
            schema = NODES.objectNode();
            schema.put("description", "no schema for " + type.getTypeName() + ": " + ex.getMessage());
            return schema;
        }
        if (!generation.definitions.isEmpty()) {
            ObjectNode withDefinitions = NODES.objectNode();
            withDefinitions.setAll(schema);
            withDefinitions.putObject("$defs").setAll(generation.definitions);
            schema = withDefinitions;
        }
        return schema;
    }

    /** One call of {@link #schema}: the types being described (for cycles) and the definitions. */
    private final class Generation {

        private final Deque<JavaType> inProgress = new ArrayDeque<>();

        private final Set<JavaType> recursive = new HashSet<>();

        private final Map<JavaType, String> names = new HashMap<>();

        private final Map<String, JsonNode> definitions = new LinkedHashMap<>();

        /**
         * The schema of one type.
         *
         * @param visitable the serializer that describes the type, when the caller has it
         * @param context the serialization context, or {@code null} at the root (the mapper makes one)
         */
        ObjectNode schemaOf(JavaType type, @Nullable JsonFormatVisitable visitable,
                @Nullable SerializationContext context) {
            Class<?> raw = type.getRawClass();
            if (raw == void.class || raw == Void.class) {
                return NODES.objectNode().put("type", "null");
            }
            if (raw == byte[].class) {
                return NODES.objectNode().put("type", "string").put("contentEncoding", "base64");
            }
            if (raw == Object.class || JsonNode.class.isAssignableFrom(raw)) {
                return NODES.objectNode();
            }
            String name = this.names.get(type);
            if (name != null && this.definitions.containsKey(name)) {
                return reference(name);
            }
            if (this.inProgress.contains(type)) {
                this.recursive.add(type);
                return reference(name(type));
            }
            this.inProgress.push(type);
            ObjectNode schema;
            try {
                Visitor visitor = new Visitor(context);
                if (context == null) {
                    JsonSchemaGenerator.this.mapper.acceptJsonFormatVisitor(type, visitor);
                }
                else {
                    JsonFormatVisitable describer = (visitable != null) ? visitable : context.findValueSerializer(type);
                    describer.acceptJsonFormatVisitor(visitor, type);
                }
                schema = visitor.schema;
            }
            finally {
                this.inProgress.pop();
            }
            if (this.recursive.contains(type)) {
                String definition = name(type);
                this.definitions.put(definition, schema);
                return reference(definition);
            }
            return schema;
        }

        private ObjectNode reference(String name) {
            return NODES.objectNode().put("$ref", "#/$defs/" + name);
        }

        /** A definition name for {@code type}: its simple class name, made unique with a number. */
        private String name(JavaType type) {
            return this.names.computeIfAbsent(type, (key) -> {
                String base = key.getRawClass().getSimpleName().replace("[]", "Array");
                String candidate = base;
                for (int i = 2; this.names.containsValue(candidate); i++) {
                    candidate = base + i;
                }
                return candidate;
            });
        }

        /** Receives what one serializer says about its type and writes it into {@link #schema}. */
        private final class Visitor implements JsonFormatVisitorWrapper {

            final ObjectNode schema = NODES.objectNode();

            private @Nullable SerializationContext context;

            Visitor(@Nullable SerializationContext context) {
                this.context = context;
            }

            @Override
            public SerializationContext getContext() {
                return Objects.requireNonNull(this.context, "no serialization context");
            }

            @Override
            public void setContext(SerializationContext context) {
                this.context = context;
            }

            @Override
            public JsonObjectFormatVisitor expectObjectFormat(JavaType type) {
                this.schema.put("type", "object");
                ObjectNode properties = this.schema.putObject("properties");
                return new JsonObjectFormatVisitor() {
                    @Override
                    public SerializationContext getContext() {
                        return Visitor.this.getContext();
                    }

                    @Override
                    public void property(BeanProperty property) {
                        add(property, true);
                    }

                    @Override
                    public void optionalProperty(BeanProperty property) {
                        add(property, property.isRequired());
                    }

                    @Override
                    public void property(String name, JsonFormatVisitable handler, JavaType propertyType) {
                        add(name, handler, propertyType, true);
                    }

                    @Override
                    public void optionalProperty(String name, JsonFormatVisitable handler, JavaType propertyType) {
                        add(name, handler, propertyType, false);
                    }

                    private void add(BeanProperty property, boolean required) {
                        JsonFormatVisitable serializer = getContext().findPrimaryPropertySerializer(
                                property.getType(), property);
                        add(property.getName(), serializer, property.getType(), required);
                    }

                    private void add(String name, @Nullable JsonFormatVisitable handler, JavaType propertyType,
                            boolean required) {
                        properties.set(name, schemaOf(propertyType, handler, getContext()));
                        if (required) {
                            JsonNode list = Visitor.this.schema.get("required");
                            ArrayNode names = (list instanceof ArrayNode array) ? array
                                    : Visitor.this.schema.putArray("required");
                            names.add(name);
                        }
                    }
                };
            }

            @Override
            public JsonArrayFormatVisitor expectArrayFormat(JavaType type) {
                this.schema.put("type", "array");
                return new JsonArrayFormatVisitor() {
                    @Override
                    public SerializationContext getContext() {
                        return Visitor.this.getContext();
                    }

                    @Override
                    public void itemsFormat(JsonFormatVisitable handler, JavaType elementType) {
                        Visitor.this.schema.set("items", schemaOf(elementType, handler, getContext()));
                    }

                    @Override
                    public void itemsFormat(JsonFormatTypes format) {
                        Visitor.this.schema.set("items", simple(format));
                    }
                };
            }

            @Override
            public JsonMapFormatVisitor expectMapFormat(JavaType type) {
                this.schema.put("type", "object");
                return new JsonMapFormatVisitor() {
                    @Override
                    public SerializationContext getContext() {
                        return Visitor.this.getContext();
                    }

                    @Override
                    public void keyFormat(JsonFormatVisitable handler, JavaType keyType) {
                        // JSON object keys are strings; an enum key type could narrow them, not worth it here.
                    }

                    @Override
                    public void valueFormat(JsonFormatVisitable handler, JavaType valueType) {
                        Visitor.this.schema.set("additionalProperties", schemaOf(valueType, handler, getContext()));
                    }
                };
            }

            @Override
            public JsonStringFormatVisitor expectStringFormat(JavaType type) {
                this.schema.put("type", "string");
                return new JsonStringFormatVisitor() {
                    @Override
                    public void format(JsonValueFormat format) {
                        Visitor.this.schema.put("format", format.toString());
                    }

                    @Override
                    public void enumTypes(Set<String> values) {
                        ArrayNode names = Visitor.this.schema.putArray("enum");
                        values.forEach(names::add);
                    }
                };
            }

            @Override
            public JsonNumberFormatVisitor expectNumberFormat(JavaType type) {
                this.schema.put("type", "number");
                return new JsonNumberFormatVisitor.Base() {
                    @Override
                    public void numberType(JsonParser.NumberType numberType) {
                        if (numberType == JsonParser.NumberType.FLOAT) {
                            Visitor.this.schema.put("format", "float");
                        }
                        else if (numberType == JsonParser.NumberType.DOUBLE) {
                            Visitor.this.schema.put("format", "double");
                        }
                    }
                };
            }

            @Override
            public JsonIntegerFormatVisitor expectIntegerFormat(JavaType type) {
                this.schema.put("type", "integer");
                return new JsonIntegerFormatVisitor.Base() {
                    @Override
                    public void numberType(JsonParser.NumberType numberType) {
                        if (numberType == JsonParser.NumberType.INT) {
                            Visitor.this.schema.put("format", "int32");
                        }
                        else if (numberType == JsonParser.NumberType.LONG) {
                            Visitor.this.schema.put("format", "int64");
                        }
                    }
                };
            }

            @Override
            public JsonBooleanFormatVisitor expectBooleanFormat(JavaType type) {
                this.schema.put("type", "boolean");
                return new JsonBooleanFormatVisitor.Base();
            }

            @Override
            public JsonNullFormatVisitor expectNullFormat(JavaType type) {
                this.schema.put("type", "null");
                return new JsonNullFormatVisitor.Base();
            }

            @Override
            public JsonAnyFormatVisitor expectAnyFormat(JavaType type) {
                return new JsonAnyFormatVisitor.Base();
            }
        }
    }

    private static ObjectNode simple(JsonFormatTypes format) {
        return (format == JsonFormatTypes.ANY) ? NODES.objectNode() : NODES.objectNode().put("type", format.value());
    }
}
