package io.homa.spring;

import io.homa.reactive.HomaTransportConfig;

/**
 * The value of {@code homa.protocol.link-mbps}: {@code auto} or a number of megabits per second
 * (0 = no pacing). Spring converts the text written in the configuration to it; the range of a
 * number is checked by the transport's config.
 *
 * @param mbps megabits per second, or {@link HomaTransportConfig#AUTO_LINK_MBPS} for auto
 */
public record LinkSpeed(int mbps) {

    /** The speed the bound device reports, else a default for the kind of address. */
    public static final LinkSpeed AUTO = new LinkSpeed(HomaTransportConfig.AUTO_LINK_MBPS);

    /** Whether this is {@code auto}. */
    public boolean isAuto() {
        return this.mbps == HomaTransportConfig.AUTO_LINK_MBPS;
    }

    /** As written in the configuration: {@code auto} or the number. */
    @Override
    public String toString() {
        return isAuto() ? "auto" : Integer.toString(this.mbps);
    }
}
