package io.homa.engine;

/**
 * A setting outside its allowed range, thrown by the config builders ({@link EngineConfig}, and
 * the transport's config above it) so that every layer validates a value once, in one place,
 * and a layer that maps its own property names onto these settings (the Spring Boot starter's
 * {@code homa.protocol.*}) can still say which property is wrong and what it allows, in its own
 * units.
 */
public final class InvalidSettingException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /** The unit of a setting's value, minimum and maximum. */
    public enum Unit {
        /** A plain number (a count, a fraction, megabits per second). */
        NONE,
        /** Bytes. */
        BYTES,
        /** Nanoseconds. */
        NANOS
    }

    private final String setting;
    private final transient Object value;
    private final transient Number minimum;
    private final transient Number maximum;
    private final Unit unit;

    /**
     * @param setting the setting's name in kebab case, e.g. {@code max-overcommit}
     * @param value the rejected value
     * @param minimum the smallest allowed value, or null if the rule is not a plain range
     * @param maximum the largest allowed value, or null if the rule is not a plain range
     * @param unit the unit of {@code value}, {@code minimum} and {@code maximum}
     * @param message the whole message, naming the setting, the rule and the value
     */
    public InvalidSettingException(String setting, Object value, Number minimum, Number maximum, Unit unit,
            String message) {
        super(message);
        this.setting = setting;
        this.value = value;
        this.minimum = minimum;
        this.maximum = maximum;
        this.unit = unit;
    }

    /** A value outside {@code minimum..maximum}: "NAME must be between MIN and MAX, was VALUE". */
    static InvalidSettingException outOfRange(String setting, long value, long minimum, long maximum, Unit unit) {
        String suffix = unit == Unit.BYTES ? " bytes" : unit == Unit.NANOS ? " ns" : "";
        return new InvalidSettingException(setting, value, minimum, maximum, unit,
                setting + " must be between " + minimum + " and " + maximum + suffix + ", was " + value + suffix);
    }

    /** The setting's name in kebab case, e.g. {@code max-overcommit}. */
    public String setting() {
        return setting;
    }

    /** The rejected value. */
    public Object value() {
        return value;
    }

    /** The smallest allowed value, or null when the rule is not a plain range (see the message). */
    public Number minimum() {
        return minimum;
    }

    /** The largest allowed value, or null when the rule is not a plain range (see the message). */
    public Number maximum() {
        return maximum;
    }

    public Unit unit() {
        return unit;
    }
}
