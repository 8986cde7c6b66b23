package io.homa.bench.report;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one scenario measured for one system.
 *
 * @param scenario s1..s6
 * @param system system id, e.g. {@code homa}
 * @param status {@link #OK}, {@link #NOT_APPLICABLE} or {@link #FAILED}
 * @param note why it is n/a or failed, or remarks (e.g. the first call error); may be empty
 * @param metrics figures by name (units in the names: {@code _us}, {@code _ms}, {@code _per_s},
 *     {@code _gbps}); nested maps and lists for distributions, deciles and fan-outs
 */
public record ScenarioResult(String scenario, String system, String status, String note, Map<String, Object> metrics) {
    public static final String OK = "ok";
    public static final String NOT_APPLICABLE = "n/a";
    public static final String FAILED = "failed";

    public static ScenarioResult ok(String scenario, String system, String note, Map<String, Object> metrics) {
        return new ScenarioResult(scenario, system, OK, note == null ? "" : note, metrics);
    }

    public static ScenarioResult notApplicable(String scenario, String system, String why) {
        return new ScenarioResult(scenario, system, NOT_APPLICABLE, why, new LinkedHashMap<>());
    }

    public static ScenarioResult failed(String scenario, String system, String why) {
        return new ScenarioResult(scenario, system, FAILED, why, new LinkedHashMap<>());
    }

    /** A numeric metric, or NaN when absent. */
    public double number(String name) {
        Object value = metrics.get(name);
        return value instanceof Number number ? number.doubleValue() : Double.NaN;
    }
}
