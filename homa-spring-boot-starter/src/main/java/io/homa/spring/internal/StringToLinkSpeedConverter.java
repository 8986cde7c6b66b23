package io.homa.spring.internal;

import io.homa.spring.LinkSpeed;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.convert.converter.Converter;

/**
 * Reads {@code homa.protocol.link-mbps}, the one property of type {@link LinkSpeed}: {@code auto}
 * (any case) or a whole number of megabits per second. Whether the number is in range is checked
 * by the transport's config, which knows the limit.
 */
public final class StringToLinkSpeedConverter implements Converter<String, LinkSpeed> {

    static final String PROPERTY = "homa.protocol.link-mbps";

    @Override
    public LinkSpeed convert(String source) {
        String value = source.trim();
        if (value.equalsIgnoreCase("auto")) {
            return LinkSpeed.AUTO;
        }
        int mbps;
        try {
            mbps = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            mbps = -1;
        }
        if (mbps < 0) {
            throw new InvalidConfigurationPropertyValueException(PROPERTY, source,
                    "must be auto or a whole number of Mbit/s between 0 and 1000000 (0 = no pacing)");
        }
        return new LinkSpeed(mbps);
    }
}
