package io.homa.spring.internal;

import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The converters that read the {@code homa.*} values written as text into their types, for every
 * auto-configuration that binds {@link io.homa.spring.HomaProperties}.
 */
@Configuration(proxyBeanMethods = false)
public class HomaPropertiesConverters {

    @Bean
    @ConfigurationPropertiesBinding
    static StringToLinkSpeedConverter homaLinkSpeedConverter() {
        return new StringToLinkSpeedConverter();
    }
}
