package io.homa.spring;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.ExceptionDepthComparator;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The {@link HomaExceptionHandler @HomaExceptionHandler} methods of one bean, and the mapping of
 * an exception through them: the handler whose exception type is closest to the exception's class
 * wins.
 */
final class HomaExceptionHandlerMethods {

    private static final Logger logger = LoggerFactory.getLogger(HomaExceptionHandlerMethods.class);

    private final Object bean;

    private final Map<Class<? extends Throwable>, Method> handlers;

    private HomaExceptionHandlerMethods(Object bean, Map<Class<? extends Throwable>, Method> handlers) {
        this.bean = bean;
        this.handlers = handlers;
    }

    /**
     * The handler methods of a bean (declared by its class or a superclass).
     *
     * @throws IllegalStateException naming the method if a handler breaks a rule of
     *     {@link HomaExceptionHandler}
     */
    static HomaExceptionHandlerMethods of(Object bean, Class<?> userClass) {
        Map<Class<? extends Throwable>, Method> handlers = new LinkedHashMap<>();
        List<Method> methods = new ArrayList<>();
        ReflectionUtils.doWithMethods(userClass, methods::add,
                (method) -> !method.isBridge() && !method.isSynthetic() && method.getDeclaringClass() != Object.class
                        && AnnotatedElementUtils.hasAnnotation(method, HomaExceptionHandler.class));
        methods.sort(Comparator.comparing(Method::toGenericString));
        for (Method method : methods) {
            HomaExceptionHandler annotation = AnnotatedElementUtils.findMergedAnnotation(method,
                    HomaExceptionHandler.class);
            List<Class<? extends Throwable>> types = exceptionTypes(method, annotation);
            Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
            ReflectionUtils.makeAccessible(invocable);
            for (Class<? extends Throwable> type : types) {
                Method previous = handlers.putIfAbsent(type, invocable);
                if (previous != null && !previous.equals(invocable)) {
                    throw new IllegalStateException("@HomaExceptionHandler methods " + describe(previous) + " and "
                            + describe(method) + " both handle " + type.getName() + "; keep one");
                }
            }
        }
        return new HomaExceptionHandlerMethods(bean, handlers);
    }

    /** Whether {@code method} is a handler (handlers are never exported as RPC methods). */
    static boolean isHandler(Method method) {
        return AnnotatedElementUtils.hasAnnotation(method, HomaExceptionHandler.class);
    }

    @SuppressWarnings("unchecked")
    private static List<Class<? extends Throwable>> exceptionTypes(Method method,
            @Nullable HomaExceptionHandler annotation) {
        if (Modifier.isStatic(method.getModifiers())) {
            throw new IllegalStateException("@HomaExceptionHandler method " + describe(method) + " must not be static");
        }
        Class<?> returnType = method.getReturnType();
        if (returnType != HomaStatus.class && !HomaException.class.isAssignableFrom(returnType)) {
            throw new IllegalStateException("@HomaExceptionHandler method " + describe(method) + " returns "
                    + returnType.getSimpleName() + "; it must return a HomaStatus or a HomaException");
        }
        Class<?>[] parameters = method.getParameterTypes();
        if (parameters.length > 1 || (parameters.length == 1 && !Throwable.class.isAssignableFrom(parameters[0]))) {
            throw new IllegalStateException("@HomaExceptionHandler method " + describe(method)
                    + " must take no parameter or the exception it handles");
        }
        List<Class<? extends Throwable>> types = new ArrayList<>();
        if (annotation != null) {
            types.addAll(Arrays.asList(annotation.value()));
        }
        if (types.isEmpty()) {
            if (parameters.length == 0) {
                throw new IllegalStateException("@HomaExceptionHandler method " + describe(method)
                        + " must list the exceptions it handles or take one as its parameter");
            }
            types.add((Class<? extends Throwable>) parameters[0]);
        }
        for (Class<? extends Throwable> type : types) {
            if (parameters.length == 1 && !parameters[0].isAssignableFrom(type)) {
                throw new IllegalStateException("@HomaExceptionHandler method " + describe(method) + " handles "
                        + type.getName() + ", which its parameter type " + parameters[0].getName() + " cannot take");
            }
        }
        return types;
    }

    boolean isEmpty() {
        return this.handlers.isEmpty();
    }

    /**
     * Maps an exception through the closest handler.
     *
     * @return the exception to answer with, or {@code null} if no handler applies or the handler
     *     returned {@code null}
     */
    @Nullable HomaException map(Throwable error) {
        Method handler = closest(error);
        if (handler == null) {
            return null;
        }
        Object result;
        try {
            result = (handler.getParameterCount() == 0) ? handler.invoke(this.bean)
                    : handler.invoke(this.bean, error);
        }
        catch (InvocationTargetException ex) {
            Throwable failure = ex.getTargetException();
            logger.warn("@HomaExceptionHandler {} failed while mapping {}", describe(handler), error, failure);
            return new HomaException(HomaStatus.INTERNAL, describe(handler) + " failed: " + failure, failure);
        }
        catch (IllegalAccessException ex) {
            throw new IllegalStateException(ex);
        }
        if (result instanceof HomaStatus status) {
            String message = error.getMessage();
            return new HomaException(status, (message != null) ? message : error.getClass().getName(), error);
        }
        return (HomaException) result;
    }

    private @Nullable Method closest(Throwable error) {
        boolean alreadyMapped = error instanceof HomaException;
        List<Class<? extends Throwable>> candidates = this.handlers.keySet().stream()
                .filter((type) -> type.isInstance(error))
                .filter((type) -> !alreadyMapped || HomaException.class.isAssignableFrom(type))
                .sorted(new ExceptionDepthComparator(error))
                .collect(Collectors.toList());
        return candidates.isEmpty() ? null : this.handlers.get(candidates.get(0));
    }

    private static String describe(Method method) {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName() + "(" + Arrays
                .stream(method.getParameterTypes()).map(Class::getSimpleName).collect(Collectors.joining(", ")) + ")";
    }
}
