package io.homa.spring;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaStatus;
import io.homa.reactive.rpc.HomaCallContext;
import io.homa.reactive.rpc.RpcDispatcher;
import io.homa.reactive.rpc.RpcMethod;
import io.homa.spring.reflection.MethodSignature;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.GenericTypeResolver;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * Finds the {@link HomaService @HomaService} beans once all singletons exist and registers their
 * methods with the {@link RpcDispatcher}, before the endpoint starts dispatching (see
 * {@link HomaEndpointLifecycle}), together with the {@link HomaExceptionHandler @HomaExceptionHandler}
 * methods of the services and of the {@link HomaControllerAdvice @HomaControllerAdvice} beans.
 * Breaking a rule of {@link HomaService} or {@link HomaExceptionHandler} fails start-up with an
 * {@link IllegalStateException} naming the method.
 */
final class HomaServiceRegistrar implements SmartInitializingSingleton {

    private final ListableBeanFactory beanFactory;

    private final RpcDispatcher dispatcher;

    /** The Java signature of each exported method, by {@code service.method}; for reflection. */
    private final Map<String, MethodSignature> signatures = new ConcurrentHashMap<>();

    HomaServiceRegistrar(ListableBeanFactory beanFactory, RpcDispatcher dispatcher) {
        this.beanFactory = beanFactory;
        this.dispatcher = dispatcher;
    }

    @Override
    public void afterSingletonsInstantiated() {
        List<Object> adviceBeans = new ArrayList<>(this.beanFactory.getBeansWithAnnotation(HomaControllerAdvice.class)
                .values());
        AnnotationAwareOrderComparator.sort(adviceBeans);
        List<HomaExceptionHandlerMethods> advice = new ArrayList<>();
        for (Object bean : adviceBeans) {
            HomaExceptionHandlerMethods handlers = HomaExceptionHandlerMethods.of(bean, userClass(bean));
            if (!handlers.isEmpty()) {
                advice.add(handlers);
            }
        }
        HomaExceptionMapper mapper = new HomaExceptionMapper(advice);
        boolean anyHandler = !advice.isEmpty();
        Map<String, String> beanNameByService = new HashMap<>();
        List<RpcMethod> methods = new ArrayList<>();
        for (String beanName : this.beanFactory.getBeanNamesForAnnotation(HomaService.class)) {
            HomaService annotation = this.beanFactory.findAnnotationOnBean(beanName, HomaService.class);
            Object bean = this.beanFactory.getBean(beanName);
            Class<?> userClass = userClass(bean);
            String service = serviceName(annotation, userClass);
            String previous = beanNameByService.putIfAbsent(service, beanName);
            if (previous != null) {
                throw new IllegalStateException("Homa service name '" + service + "' is exported by both bean '"
                        + previous + "' and bean '" + beanName + "'; give one of them another @HomaService(name)");
            }
            HomaExceptionHandlerMethods local = HomaExceptionHandlerMethods.of(bean, userClass);
            anyHandler |= !local.isEmpty();
            methods.addAll(rpcMethods(service, bean, userClass, local.isEmpty() ? null
                    : (error) -> mapper.tag(error, local),
                    (name, method) -> this.signatures.put(service + "." + name, MethodSignature.of(method, userClass))));
        }
        if (anyHandler) {
            this.dispatcher.addExceptionMapper(mapper);
        }
        methods.forEach(this.dispatcher::register);
    }

    /**
     * The Java signature of an exported method (result type, parameter names), or {@code null} for
     * a method this registrar did not export.
     */
    @Nullable MethodSignature signature(String service, String method) {
        return this.signatures.get(service + "." + method);
    }

    private static Class<?> userClass(Object bean) {
        return ClassUtils.getUserClass(AopProxyUtils.ultimateTargetClass(bean));
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

    /** {@link #rpcMethods(String, Object, Class, ErrorTagger)} without exception handlers. */
    static List<RpcMethod> rpcMethods(String service, Object bean, Class<?> userClass) {
        return rpcMethods(service, bean, userClass, null);
    }

    /**
     * The exported methods of one bean, sorted by RPC method name.
     *
     * @param service the service name
     * @param bean the bean (possibly an AOP proxy: calls go through it)
     * @param userClass the class whose declared methods are exported
     * @param tagger sees each exception a method signals, before the dispatcher maps it; or {@code null}
     * @throws IllegalStateException naming the method if one breaks a rule of {@link HomaService}
     */
    static List<RpcMethod> rpcMethods(String service, Object bean, Class<?> userClass, @Nullable ErrorTagger tagger) {
        return rpcMethods(service, bean, userClass, tagger, null);
    }

    /**
     * {@link #rpcMethods(String, Object, Class, ErrorTagger)}, telling {@code exported} each RPC
     * method name with the Java method behind it.
     */
    static List<RpcMethod> rpcMethods(String service, Object bean, Class<?> userClass, @Nullable ErrorTagger tagger,
            @Nullable BiConsumer<String, Method> exported) {
        Map<String, Method> byName = new LinkedHashMap<>();
        Method[] declared = userClass.getDeclaredMethods();
        Arrays.sort(declared, Comparator.comparing(Method::getName));
        HomaService annotation = AnnotatedElementUtils.findMergedAnnotation(userClass, HomaService.class);
        boolean exportAll = annotation == null || annotation.exportAll();
        for (Method method : declared) {
            if (!isExported(method, userClass)
                    || (!exportAll && !AnnotatedElementUtils.hasAnnotation(method, HomaMethod.class))) {
                continue;
            }
            String name = rpcName(service, method);
            Method other = byName.putIfAbsent(name, method);
            if (other != null) {
                throw new IllegalStateException("@HomaService '" + service + "' (" + userClass.getName()
                        + ") exports " + describe(other) + " and " + describe(method) + " both as '" + name
                        + "' (overloaded methods?); exported method names must be unique within a service:"
                        + " rename one with @HomaMethod(name)");
            }
        }
        List<RpcMethod> methods = new ArrayList<>(byName.size());
        new java.util.TreeMap<>(byName).forEach((name, method) -> {
            methods.add(rpcMethod(service, name, bean, userClass, method, tagger));
            if (exported != null) {
                exported.accept(name, method);
            }
        });
        return methods;
    }

    private static String rpcName(String service, Method method) {
        HomaMethod annotation = AnnotatedElementUtils.findMergedAnnotation(method, HomaMethod.class);
        if (annotation == null || !StringUtils.hasText(annotation.name())) {
            return method.getName();
        }
        String name = annotation.name().trim();
        if (name.indexOf('/') >= 0 || name.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalStateException("@HomaService '" + service + "' method " + describe(method)
                    + " has @HomaMethod(name = \"" + name + "\"); names must not contain white space or '/'");
        }
        return name;
    }

    private static boolean isExported(Method method, Class<?> userClass) {
        int modifiers = method.getModifiers();
        if (!Modifier.isPublic(modifiers) || Modifier.isStatic(modifiers) || method.isSynthetic()
                || method.isBridge() || HomaExceptionHandlerMethods.isHandler(method)) {
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

    private static RpcMethod rpcMethod(String service, String name, Object bean, Class<?> userClass, Method method,
            @Nullable ErrorTagger tagger) {
        // HomaCallContext parameters are filled in from the call, not sent: they are no wire arguments.
        Class<?>[] parameterClasses = method.getParameterTypes();
        Type[] parameterTypes = method.getGenericParameterTypes();
        List<Type> wireTypes = new ArrayList<>();
        for (int i = 0; i < parameterTypes.length; i++) {
            if (parameterClasses[i] != HomaCallContext.class) {
                wireTypes.add(GenericTypeResolver.resolveType(parameterTypes[i], userClass));
            }
        }
        Type[] argumentTypes = wireTypes.toArray(Type[]::new);
        ContextArguments context = ContextArguments.of(parameterClasses);
        Class<?> returnType = method.getReturnType();
        Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
        ReflectionUtils.makeAccessible(invocable);
        Invocation invocation = new Invocation(bean, invocable, service + "." + name, method.getParameterTypes());
        HomaMethod annotation = AnnotatedElementUtils.findMergedAnnotation(method, HomaMethod.class);
        boolean idempotent = annotation != null && annotation.idempotent();
        Function<@Nullable Object[], Publisher<?>> invoker;
        RpcMethod.Kind kind = RpcMethod.Kind.UNARY;
        boolean blocking = false;
        boolean requestStream = requestStreamIndex(service, method) >= 0;
        if (requestStream && !Mono.class.isAssignableFrom(returnType) && !Flux.class.isAssignableFrom(returnType)) {
            throw new IllegalStateException("@HomaService '" + service + "' method " + describe(method)
                    + " takes a request stream (a Flux parameter), so it must return Mono<T> (client streaming)"
                    + " or Flux<T> (bidirectional streaming), not " + returnType.getSimpleName());
        }
        if (Mono.class.isAssignableFrom(returnType)) {
            invoker = (arguments) -> tag(Mono.deferContextual((ctx) -> Mono.from(invocation.callAsync(
                    context.expand(arguments, ctx), "a Mono", (result) -> (Mono<?>) result))), tagger);
        }
        else if (Publisher.class.isAssignableFrom(returnType)) {
            kind = RpcMethod.Kind.STREAM;
            invoker = (arguments) -> tag(Flux.deferContextual((ctx) -> invocation.callAsync(
                    context.expand(arguments, ctx), "a Publisher", (result) -> (Publisher<?>) result)), tagger);
        }
        else if (CompletionStage.class.isAssignableFrom(returnType)) {
            invoker = (arguments) -> tag(Mono.deferContextual((ctx) -> Mono.from(invocation.callAsync(
                    context.expand(arguments, ctx), "a CompletionStage",
                    (result) -> Mono.fromCompletionStage((CompletionStage<?>) result)))), tagger);
        }
        else {
            // Plain T and void: runs when subscribed, which the dispatcher does on its scheduler.
            invoker = (arguments) -> tag(Mono.deferContextual((ctx) -> Mono.fromCallable(
                    () -> invocation.callUnchecked(context.expand(arguments, ctx)))), tagger);
            blocking = true;
        }
        if (requestStream) {
            kind = (kind == RpcMethod.Kind.STREAM) ? RpcMethod.Kind.BIDI_STREAM : RpcMethod.Kind.CLIENT_STREAM;
        }
        return new RpcMethod(service, name, argumentTypes, kind, idempotent, invoker, blocking);
    }

    /**
     * The position of the method's request stream (its one {@code Flux} or {@code Publisher}
     * parameter), or -1.
     *
     * @throws IllegalStateException for more than one such parameter, or a {@code Mono} parameter
     */
    private static int requestStreamIndex(String service, Method method) {
        Class<?>[] types = method.getParameterTypes();
        int index = -1;
        for (int i = 0; i < types.length; i++) {
            if (!Publisher.class.isAssignableFrom(types[i])) {
                continue;
            }
            if (types[i] != Flux.class && types[i] != Publisher.class) {
                throw new IllegalStateException("@HomaService '" + service + "' method " + describe(method)
                        + " has a " + types[i].getSimpleName() + " parameter; a request stream is declared as Flux<T>"
                        + " (or Publisher<T>)");
            }
            if (index >= 0) {
                throw new IllegalStateException("@HomaService '" + service + "' method " + describe(method)
                        + " has more than one Flux parameter; a method takes at most one request stream");
            }
            index = i;
        }
        return index;
    }

    private static Publisher<?> tag(Mono<?> result, @Nullable ErrorTagger tagger) {
        return (tagger != null) ? result.doOnError(tagger::tag) : result;
    }

    private static Publisher<?> tag(Flux<?> result, @Nullable ErrorTagger tagger) {
        return (tagger != null) ? result.doOnError(tagger::tag) : result;
    }

    private static String describe(Method method) {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName()
                + Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName)
                        .collect(Collectors.joining(", ", "(", ")"));
    }

    /**
     * Where a method takes {@link HomaCallContext} parameters: they are filled in from the Reactor context.
     *
     * @param any whether there is one (computed once, not per call)
     */
    private record ContextArguments(Class<?>[] parameterClasses, boolean any) {

        static ContextArguments of(Class<?>[] parameterClasses) {
            return new ContextArguments(parameterClasses,
                    Arrays.stream(parameterClasses).anyMatch((type) -> type == HomaCallContext.class));
        }

        /** The method's arguments: the wire arguments, with the call's context where it is declared. */
        @Nullable Object @Nullable [] expand(@Nullable Object @Nullable [] wire, ContextView ctx) {
            if (!this.any || wire == null) {
                return wire;
            }
            HomaCallContext call = ctx.getOrDefault(HomaCallContext.class, null);
            @Nullable Object[] arguments = new Object[this.parameterClasses.length];
            for (int i = 0, j = 0; i < arguments.length; i++) {
                if (this.parameterClasses[i] == HomaCallContext.class) {
                    arguments[i] = call;
                }
                else {
                    arguments[i] = (j < wire.length) ? wire[j++] : null;
                }
            }
            return arguments;
        }
    }

    /** Sees the exceptions a service's methods signal. */
    @FunctionalInterface
    interface ErrorTagger {

        void tag(Throwable error);
    }

    /** One reflective call, with the target's own exception surfaced instead of InvocationTargetException. */
    private record Invocation(Object bean, Method method, String label, Class<?>[] parameterTypes) {

        @Nullable Object call(@Nullable Object @Nullable [] arguments) throws Throwable {
            Object[] values = (arguments != null) ? arguments : new Object[0];
            if (values.length != this.parameterTypes.length) {
                throw new HomaException(HomaStatus.INVALID_ARGUMENT, this.label + " takes "
                        + this.parameterTypes.length + " argument(s), got " + values.length);
            }
            for (int i = 0; i < values.length; i++) {
                if (values[i] == null && this.parameterTypes[i].isPrimitive()) {
                    throw new HomaException(HomaStatus.INVALID_ARGUMENT, this.label + " needs an argument of type "
                            + this.parameterTypes[i].getName() + ((values.length > 1) ? " at position " + i : ""));
                }
            }
            try {
                return this.method.invoke(this.bean, values);
            }
            catch (InvocationTargetException ex) {
                throw ex.getTargetException();
            }
        }

        /** Calls a method that returns a publisher or {@code CompletionStage}; its failure becomes an error signal. */
        Publisher<?> callAsync(@Nullable Object @Nullable [] arguments, String kind,
                Function<Object, Publisher<?>> adapter) {
            @Nullable Object result;
            try {
                result = call(arguments);
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
        @Nullable Object callUnchecked(@Nullable Object @Nullable [] arguments) throws Exception {
            try {
                return call(arguments);
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
