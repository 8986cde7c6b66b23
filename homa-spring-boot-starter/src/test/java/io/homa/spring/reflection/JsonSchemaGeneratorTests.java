package io.homa.spring.reflection;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.core.ParameterizedTypeReference;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** JSON Schemas from Jackson's format visitors. */
class JsonSchemaGeneratorTests {

    private final JsonMapper mapper = JsonMapper.builder().build();

    private final JsonSchemaGenerator generator = new JsonSchemaGenerator(this.mapper);

    enum Color { RED, GREEN }

    record Item(String name, int count, long total, double price, boolean active, Color color,
            @JsonProperty(value = "sku", required = true) String code, @JsonIgnore String secret) {
    }

    record Order(UUID id, List<Item> items, Map<String, Integer> quantities, byte[] signature,
            Optional<String> note, Instant placed, Object extra, JsonNode raw) {
    }

    record Node(String name, List<Node> children) {
    }

    record Tree(Node root, Node other) {
    }

    private JsonNode json(String text) {
        return this.mapper.readTree(text);
    }

    @Test
    void shouldDescribeScalarsAsTheirJsonTypes() {
        assertThat(this.generator.schema(String.class)).isEqualTo(json("{\"type\":\"string\"}"));
        assertThat(this.generator.schema(int.class)).isEqualTo(json("{\"type\":\"integer\",\"format\":\"int32\"}"));
        assertThat(this.generator.schema(Long.class)).isEqualTo(json("{\"type\":\"integer\",\"format\":\"int64\"}"));
        assertThat(this.generator.schema(double.class)).isEqualTo(json("{\"type\":\"number\",\"format\":\"double\"}"));
        assertThat(this.generator.schema(boolean.class)).isEqualTo(json("{\"type\":\"boolean\"}"));
        assertThat(this.generator.schema(void.class)).isEqualTo(json("{\"type\":\"null\"}"));
        assertThat(this.generator.schema(Void.class)).isEqualTo(json("{\"type\":\"null\"}"));
        assertThat(this.generator.schema(Object.class)).isEqualTo(json("{}"));
        assertThat(this.generator.schema(byte[].class))
                .isEqualTo(json("{\"type\":\"string\",\"contentEncoding\":\"base64\"}"));
        assertThat(this.generator.schema(Color.class))
                .isEqualTo(json("{\"type\":\"string\",\"enum\":[\"RED\",\"GREEN\"]}"));
    }

    @Test
    void shouldDescribeARecordWithJacksonsPropertyNames() {
        JsonNode schema = this.generator.schema(Item.class);
        assertThat(schema.get("type").asString()).isEqualTo("object");
        assertThat(schema.get("properties").propertyNames()).containsExactlyInAnyOrder("name", "count", "total",
                "price", "active", "color", "sku");
        assertThat(schema.at("/properties/count")).isEqualTo(json("{\"type\":\"integer\",\"format\":\"int32\"}"));
        assertThat(schema.at("/properties/color/enum")).isEqualTo(json("[\"RED\",\"GREEN\"]"));
        assertThat(schema.get("required")).isEqualTo(json("[\"sku\"]"));
    }

    @Test
    void shouldDescribeCollectionsMapsAndNestedObjects() {
        JsonNode schema = this.generator.schema(Order.class);
        assertThat(schema.at("/properties/id")).isEqualTo(json("{\"type\":\"string\",\"format\":\"uuid\"}"));
        assertThat(schema.at("/properties/items/type").asString()).isEqualTo("array");
        assertThat(schema.at("/properties/items/items/properties/sku")).isEqualTo(json("{\"type\":\"string\"}"));
        assertThat(schema.at("/properties/quantities")).isEqualTo(json(
                "{\"type\":\"object\",\"additionalProperties\":{\"type\":\"integer\",\"format\":\"int32\"}}"));
        assertThat(schema.at("/properties/signature"))
                .isEqualTo(json("{\"type\":\"string\",\"contentEncoding\":\"base64\"}"));
        assertThat(schema.at("/properties/note")).isEqualTo(json("{\"type\":\"string\"}"));
        assertThat(schema.at("/properties/extra")).isEqualTo(json("{}"));
        assertThat(schema.at("/properties/raw")).isEqualTo(json("{}"));
        assertThat(schema.has("$defs")).isFalse();
    }

    @Test
    void shouldDescribeGenericTypes() {
        JsonNode schema = this.generator.schema(new ParameterizedTypeReference<List<Map<String, Color>>>() { }
                .getType());
        assertThat(schema).isEqualTo(json("{\"type\":\"array\",\"items\":{\"type\":\"object\","
                + "\"additionalProperties\":{\"type\":\"string\",\"enum\":[\"RED\",\"GREEN\"]}}}"));
    }

    @Test
    void shouldPutATypeThatContainsItselfUnderDefs() {
        JsonNode schema = this.generator.schema(Tree.class);
        assertThat(schema.at("/properties/root")).isEqualTo(json("{\"$ref\":\"#/$defs/Node\"}"));
        assertThat(schema.at("/properties/other")).isEqualTo(json("{\"$ref\":\"#/$defs/Node\"}"));
        assertThat(schema.at("/$defs/Node/properties/name")).isEqualTo(json("{\"type\":\"string\"}"));
        assertThat(schema.at("/$defs/Node/properties/children"))
                .isEqualTo(json("{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/Node\"}}"));
        JsonNode node = this.generator.schema(Node.class);
        assertThat(node.get("$ref").asString()).isEqualTo("#/$defs/Node");
        assertThat(node.at("/$defs/Node/type").asString()).isEqualTo("object");
    }
}
