package io.homa.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.homa.reactive.HomaTransportConfig;
import io.homa.spring.LinkSpeed;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** How homa.protocol.link-mbps is read from the text written in the configuration. */
class StringToLinkSpeedConverterTests {

    private final StringToLinkSpeedConverter converter = new StringToLinkSpeedConverter();

    @Test
    void shouldReadAutoInAnyCase() {
        assertThat(this.converter.convert("auto")).isSameAs(LinkSpeed.AUTO);
        assertThat(this.converter.convert(" AUTO ")).isSameAs(LinkSpeed.AUTO);
        assertThat(LinkSpeed.AUTO.mbps()).isEqualTo(HomaTransportConfig.AUTO_LINK_MBPS);
        assertThat(LinkSpeed.AUTO).hasToString("auto");
    }

    @Test
    void shouldReadAWholeNumberOfMegabits() {
        assertThat(this.converter.convert("25000")).isEqualTo(new LinkSpeed(25_000));
        assertThat(this.converter.convert("0").isAuto()).isFalse();
        assertThat(new LinkSpeed(10_000)).hasToString("10000");
    }

    @ParameterizedTest
    @ValueSource(strings = {"fast", "-1", "1.5", ""})
    void shouldNameThePropertyAndTheValueAsWritten(String value) {
        assertThatThrownBy(() -> this.converter.convert(value))
                .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                .hasMessageContaining("Property homa.protocol.link-mbps with value '" + value + "' is invalid")
                .hasMessageContaining("must be auto or a whole number of Mbit/s between 0 and 1000000");
    }
}
