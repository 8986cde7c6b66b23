package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The methods a dispatcher exports, by service and method name. Thread-safe: methods may be
 * registered while requests are served.
 */
final class MethodTable {
    private final Map<MethodKey, RpcMethod> methods = new ConcurrentHashMap<>();

    /** Exports {@code method}, replacing one of the same service and method. */
    void register(RpcMethod method) {
        Objects.requireNonNull(method, "method must not be null");
        methods.put(new MethodKey(method.service(), method.method()), method);
    }

    Optional<RpcMethod> lookup(String service, String method) {
        return Optional.ofNullable(methods.get(new MethodKey(service, method)));
    }

    /** Whether at least one method of {@code service} is exported (no copy: cheap per call). */
    boolean exports(String service) {
        for (MethodKey key : methods.keySet()) {
            if (key.service().equals(service)) {
                return true;
            }
        }
        return false;
    }

    /** A snapshot. */
    Collection<RpcMethod> methods() {
        return List.copyOf(methods.values());
    }

    /**
     * The method {@code call} calls.
     *
     * @throws HomaException UNIMPLEMENTED, naming the method or, if none of its service's is
     *     exported, the service
     */
    RpcMethod method(ServerCall call) {
        RpcMethod method = methods.get(new MethodKey(call.service(), call.method()));
        if (method == null) {
            boolean serviceKnown = exports(call.service());
            throw new HomaException(HomaStatus.UNIMPLEMENTED, serviceKnown
                    ? "unknown method " + call.fullMethodName() + ": service " + call.service() + " has no such method"
                    : "unknown service " + call.service() + " (called " + call.fullMethodName() + ")");
        }
        return method;
    }

    private record MethodKey(String service, String method) {}
}
