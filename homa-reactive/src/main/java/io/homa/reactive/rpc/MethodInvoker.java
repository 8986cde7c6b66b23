package io.homa.reactive.rpc;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.NanoClock;
import io.homa.reactive.internal.rpc.EnvelopeCodec;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;

/**
 * The steps of running one exported method that unary calls and streams share: its deadline,
 * its decoded arguments, its invocation and the response metadata it set.
 */
final class MethodInvoker {
    private MethodInvoker() {}

    /** The absolute deadline in ns, 0 for none; throws DEADLINE_EXCEEDED if it has passed. */
    static long deadlineNs(ServerCall call, long arrivalNs) {
        String value = call.metadata().get(RpcMetadata.TIMEOUT_MS);
        if (value == null) {
            return 0;
        }
        long timeoutMs;
        try {
            timeoutMs = Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "metadata " + RpcMetadata.TIMEOUT_MS + " must be a whole number of milliseconds, was '" + value + "'");
        }
        if (timeoutMs <= 0) {
            throw new HomaException(HomaStatus.DEADLINE_EXCEEDED,
                    "deadline of " + call.fullMethodName() + " passed before the call arrived");
        }
        long deadlineNs = arrivalNs + TimeUnit.MILLISECONDS.toNanos(Math.min(timeoutMs, TimeUnit.DAYS.toMillis(365)));
        return deadlineNs == 0 ? 1 : deadlineNs;
    }

    static void checkDeadline(ServerCall call, long deadlineNs, NanoClock clock) {
        if (deadlineNs != 0 && deadlineNs - clock.nanoTime() <= 0) {
            throw new HomaException(HomaStatus.DEADLINE_EXCEEDED,
                    "deadline of " + call.fullMethodName() + " passed before the call started");
        }
    }

    static @Nullable Object[] decodeArguments(RpcMethod method, PayloadCodec codec,
            EnvelopeCodec.RequestView envelope) {
        try {
            return codec.decodeArguments(envelope.payload(), method.wireArgumentTypes());
        } catch (HomaException e) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "invalid argument for " + method.fullName() + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                    "invalid argument for " + method.fullName() + ": " + ServerErrors.describe(e), e);
        }
    }

    static Publisher<?> invoke(RpcMethod method, @Nullable Object[] arguments) {
        Publisher<?> result = method.invoker().apply(arguments);
        if (result == null) {
            throw new NullPointerException("invoker of " + method.fullName() + " returned null");
        }
        return result;
    }

    /** {@code response} with the metadata the method set ({@link HomaCallContext#responseMetadata()}). */
    static RpcEnvelope.Response withResponseMetadata(RpcEnvelope.Response response, HomaCallContext context) {
        if (context.responseMetadata().isEmpty()) {
            return response; // the usual case: no snapshot, no iterator
        }
        RpcEnvelope.Response result = response;
        for (Map.Entry<String, String> entry : context.responseMetadata().asMap().entrySet()) {
            result = result.withMetadata(entry.getKey(), entry.getValue());
        }
        return result;
    }
}
