package io.homa.spring;

import io.homa.reactive.HomaException;
import io.homa.reactive.rpc.RpcExceptionMapper;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The {@link RpcExceptionMapper} behind {@link HomaExceptionHandler @HomaExceptionHandler}: an
 * exception is mapped first by the handlers of the service that raised it, then by the
 * {@link HomaControllerAdvice @HomaControllerAdvice} beans in order.
 *
 * <p>The dispatcher's mapper sees only the exception, so each service's invoker {@link #tag tags}
 * the exceptions it signals with the service's own handlers (a weak identity map, cleared when the
 * exception is mapped or collected).
 */
final class HomaExceptionMapper implements RpcExceptionMapper {

    private final Map<Throwable, HomaExceptionHandlerMethods> origins = Collections.synchronizedMap(new WeakHashMap<>());

    private final List<HomaExceptionHandlerMethods> advice;

    HomaExceptionMapper(List<HomaExceptionHandlerMethods> advice) {
        this.advice = List.copyOf(advice);
    }

    /** Records that {@code error} came from a service whose own handlers are {@code local}. */
    void tag(Throwable error, HomaExceptionHandlerMethods local) {
        this.origins.put(error, local);
    }

    @Override
    public @Nullable HomaException map(Throwable error) {
        HomaExceptionHandlerMethods local = this.origins.remove(error);
        if (local != null) {
            HomaException mapped = local.map(error);
            if (mapped != null) {
                return mapped;
            }
        }
        for (HomaExceptionHandlerMethods handlers : this.advice) {
            HomaException mapped = handlers.map(error);
            if (mapped != null) {
                return mapped;
            }
        }
        return null;
    }
}
