package io.homa.spring;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.GenericTypeResolver;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;

/**
 * Finds the {@link HomaService @HomaService} beans once all singletons exist and registers their
 * methods with the {@link RpcDispatcher}, before the endpoint starts dispatching (see
 * {@link HomaRequestGate}). Breaking a rule of {@link HomaService} fails start-up with an
 * {@link IllegalStateException} naming the method.
 */
final class HomaServiceRegistrar implements SmartInitializingSingleton {

    private final ListableBeanFactory beanFactory;

    private final RpcDispatcher dispatcher;

    HomaServiceRegistrar(ListableBeanFactory beanFactory, RpcDispatcher dispatcher) {
        this.beanFactory = beanFactory;
        this.dispatcher = dispatcher;
    }

    @Override
    public void afterSingletonsInstantiated() {
        Map<String, String> beanNameByService = new HashMap<>();
        for (String beanName : this.beanFactory.getBeanNamesForAnnotation(HomaService.class)) {
            HomaService annotation = this.beanFactory.findAnnotationOnBean(beanName, HomaService.class);
            Object bean = this.beanFactory.getBean(beanName);
            Class<?> userClass = ClassUtils.getUserClass(AopProxyUtils.ultimateTargetClass(bean));
            String service = serviceName(annotation, userClass);
            String previous = beanNameByService.putIfAbsent(service, beanName);
            if (previous != null) {
                throw new IllegalStateException("Homa service name '" + service + "' is exported by both bean '"
                        + previous + "' and bean '" + beanName + "'; give one of them another @HomaService(name)");
            }
            rpcMethods(service, bean, userClass).forEach(this.dispatcher::register);
        }
    }

    /**
     * The service name: the annotation's {@code name}, else the user class's simple name.
     */
    static String serviceName(@Nullable HomaService annotation, Class<?> userClass) {
        String name = (annotation != null) ? annotation.name() : "";
        if (!StringUtils.hasText(name)) {
            name = userClass.getSimpleName();
        }
        if (!StringUtils.hasText(name)) {
            throw new IllegalStateException("@HomaService class " + userClass.getName()
                    + " has no simple name (anonymous class?); set @HomaService(name)");
        }
        return name;
    }

    /**
     * The exported methods of one bean, sorted by name.
     *
     * @param service the service name
     * @param bean the bean (possibly an AOP proxy: calls go through it)
     * @param userClass the class whose declared methods are exported
     * @throws IllegalStateException naming the method if one breaks a rule of {@link HomaService}
     */
    static List<RpcMethod> rpcMethods(String service, Object bean, Class<?> userClass) {
        Map<String, Method> byName = new LinkedHashMap<>();
        Method[] declared = userClass.getDeclaredMethods();
        Arrays.sort(declared, Comparator.comparing(Method::getName));
        for (Method method : declared) {
            if (!isExported(method, userClass)) {
                continue;
            }
            Method other = byName.putIfAbsent(method.getName(), method);
            if (other != null) {
                throw new IllegalStateException("@HomaService '" + service + "' (" + userClass.getName()
                        + ") has overloaded methods " + describe(other) + " and " + describe(method)
                        + "; exported method names must be unique within a service");
            }
        }
        List<RpcMethod> methods = new ArrayList<>(byName.size());
        for (Method method : byName.values()) {
            methods.add(rpcMethod(service, bean, userClass, method));
        }
        return methods;
    }

    private static boolean isExported(Method method, Class<?> userClass) {
        int modifiers = method.getModifiers();
        if (!Modifier.isPublic(modifiers) || Modifier.isStatic(modifiers) || method.isSynthetic()
                || method.isBridge()) {
            return false;
        }
        if (ReflectionUtils.findMethod(Object.class, method.getName(), method.getParameterTypes()) != null) {
            return false;
        }
        // Container callbacks (InitializingBean, DisposableBean, Aware, Lifecycle, AutoCloseable ...) are not RPCs.
        for (Class<?> type : ClassUtils.getAllInterfacesForClassAsSet(userClass)) {
            boolean container = type.getName().startsWith("org.springframework.")
                    || type == AutoCloseable.class || type == java.io.Closeable.class;
            if (container && ReflectionUtils.findMethod(type, method.getName(), method.getParameterTypes()) != null) {
                return false;
            }
        }
        return true;
    }

    private static RpcMethod rpcMethod(String service, Object bean, Class<?> userClass, Method method) {
        int parameterCount = method.getParameterCount();
        if (parameterCount > 1) {
            throw new IllegalStateException("@HomaService '" + service + "' method " + describe(method) + " has "
                    + parameterCount + " parameters; exported methods take zero or one parameter"
                    + " (wrap several values in a record)");
        }
        Type argumentType = (parameterCount == 1)
                ? GenericTypeResolver.resolveType(method.getGenericParameterTypes()[0], userClass)
                : null;
        Class<?> returnType = method.getReturnType();
        if (Publisher.class.isAssignableFrom(returnType) && !Mono.class.isAssignableFrom(returnType)) {
            throw new IllegalStateException("@HomaService '" + service + "' method " + describe(method)
                    + " returns " + returnType.getSimpleName()
                    + "; only Mono, CompletionStage and plain values are supported so far");
        }
        Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
        ReflectionUtils.makeAccessible(invocable);
        Invocation invocation = new Invocation(bean, invocable, service + "." + method.getName(),
                (parameterCount == 1) ? method.getParameterTypes()[0] : null);
        Function<Object, Mono<?>> invoker;
        if (Mono.class.isAssignableFrom(returnType)) {
            invoker = (argument) -> Mono.defer(() -> invocation.callAsync(argument, "a Mono", Mono.class::cast));
        }
        else if (CompletionStage.class.isAssignableFrom(returnType)) {
            invoker = (argument) -> Mono.defer(() -> invocation.callAsync(argument, "a CompletionStage",
                    (result) -> Mono.fromCompletionStage((CompletionStage<?>) result)));
        }
        else {
            invoker = (argument) -> Mono.fromCallable(() -> invocation.callUnchecked(argument));
        }
        return new RpcMethod(service, method.getName(), argumentType, invoker);
    }

    private static String describe(Method method) {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName()
                + Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName)
                        .collect(Collectors.joining(", ", "(", ")"));
    }

    /** One reflective call, with the target's own exception surfaced instead of InvocationTargetException. */
    private record Invocation(Object bean, Method method, String label, @Nullable Class<?> parameterType) {

        @Nullable Object call(@Nullable Object argument) throws Throwable {
            Object[] arguments;
            if (this.parameterType == null) {
                arguments = new Object[0];
            }
            else if (argument == null && this.parameterType.isPrimitive()) {
                throw new HomaException(HomaStatus.INVALID_ARGUMENT,
                        this.label + " needs an argument of type " + this.parameterType.getName());
            }
            else {
                arguments = new Object[] {argument};
            }
            try {
                return this.method.invoke(this.bean, arguments);
            }
            catch (InvocationTargetException ex) {
                throw ex.getTargetException();
            }
        }

        /** Calls a method that returns a {@code Mono} or {@code CompletionStage}; its failure becomes an error signal. */
        Mono<?> callAsync(@Nullable Object argument, String kind, Function<Object, Mono<?>> adapter) {
            @Nullable Object result;
            try {
                result = call(argument);
            }
            catch (Throwable ex) {
                Exceptions.throwIfJvmFatal(ex);
                return Mono.error(ex);
            }
            if (result == null) {
                return Mono.error(new IllegalStateException(this.label + " returned null instead of " + kind));
            }
            return adapter.apply(result);
        }

        /** Calls a method that returns a plain value; for {@link Mono#fromCallable}. */
        @Nullable Object callUnchecked(@Nullable Object argument) throws Exception {
            try {
                return call(argument);
            }
            catch (Exception | Error ex) {
                throw ex;
            }
            catch (Throwable ex) {
                throw new IllegalStateException(this.label + " failed", ex);
            }
        }
    }
}
