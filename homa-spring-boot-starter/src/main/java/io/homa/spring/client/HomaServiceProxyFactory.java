package io.homa.spring.client;

import io.homa.reactive.rpc.CallOptions;
import io.homa.reactive.rpc.HomaClient;
import io.homa.reactive.rpc.HomaMetadata;
import io.homa.reactive.rpc.HomaResponse;
import io.homa.reactive.rpc.PayloadCodecs;
import io.homa.spring.HomaMethod;
import io.homa.spring.HomaProperties;
import io.homa.spring.internal.HomaSettingsMapper;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Proxy;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.time.Duration;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.GenericTypeResolver;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Makes the implementations of {@link HomaExchange @HomaExchange} interfaces: JDK proxies that
 * turn each method call into {@link HomaClient#call(String, String, Object[], Type, CallOptions)}
 * or {@link HomaClient#stream(String, String, Object[], Type, CallOptions)} with the method's
 * {@link CallOptions} (deadline, idempotence, codec), so client interceptors see them. The
 * starter registers one as a bean; use it directly to create clients by hand.
 *
 * <p>Every method is checked when its client is created: an unsupported return type, a bad
 * timeout or an unknown codec fails creation with an exception naming the method or the property.
 */
public final class HomaServiceProxyFactory {

    private final HomaClient client;

    private final HomaProperties.Client properties;

    private final Set<String> codecNames;

    private final UnaryOperator<String> placeholders;

    /**
     * @param client the client that sends the calls
     * @param properties the {@code homa.client} settings (per-service timeouts and codecs)
     * @param codecNames the codec names the client knows, to check configured codecs against
     * @param placeholders resolves {@code ${...}} in annotation values (identity for none)
     * @throws InvalidConfigurationPropertyValueException naming {@code homa.client.services.<s>.codec}
     *     or {@code homa.client.codec} if it names a codec not in {@code codecNames}
     */
    public HomaServiceProxyFactory(HomaClient client, HomaProperties.Client properties, Collection<String> codecNames,
            UnaryOperator<String> placeholders) {
        this.client = Objects.requireNonNull(client, "client must not be null");
        this.properties = Objects.requireNonNull(properties, "properties must not be null");
        this.codecNames = Collections.unmodifiableSet(new LinkedHashSet<>(codecNames));
        this.placeholders = Objects.requireNonNull(placeholders, "placeholders must not be null");
        checkCodec("homa.client.codec", properties.getCodec());
        properties.getServices().forEach((service, settings) -> {
            String codec = HomaSettingsMapper.configuredCodec(properties, service);
            if (codec != null) {
                checkCodec("homa.client.services." + service + ".codec", codec);
            }
        });
    }

    private void checkCodec(String property, String codec) {
        if (!this.codecNames.contains(codec.trim())) {
            throw new InvalidConfigurationPropertyValueException(property, codec,
                    "must be one of the codecs available: " + allowedCodecs() + dataformatHint(codec.trim()));
        }
    }

    private String allowedCodecs() {
        return String.join(", ", this.codecNames);
    }

    /** For smile or cbor: the dependency that brings its Jackson dataformat, for an error message. */
    private static String dataformatHint(String codec) {
        return PayloadCodecs.requiredDependency(codec)
                .map((dependency) -> " (" + codec + " needs " + dependency + " on the classpath)").orElse("");
    }

    /**
     * The options yml gives a programmatic call of {@code service.method}: the timeout of
     * {@code homa.client.services.<service>.methods.<method>.timeout} or
     * {@code homa.client.services.<service>.timeout}, the codec of
     * {@code homa.client.services.<service>.codec}; unset values stay {@code null}, so the
     * client's defaults apply.
     */
    public CallOptions callOptions(String service, String method, boolean idempotent) {
        return new CallOptions(HomaSettingsMapper.configuredTimeout(this.properties, service, method), idempotent,
                HomaSettingsMapper.configuredCodec(this.properties, service), Map.of());
    }

    /**
     * Implements a client interface.
     *
     * @param type an interface annotated {@link HomaExchange @HomaExchange}
     * @return the client; thread-safe
     * @throws IllegalStateException naming the interface or method if it breaks a rule of
     *     {@link HomaExchange}
     */
    public <T> T createClient(Class<T> type) {
        Objects.requireNonNull(type, "type must not be null");
        HomaExchange exchange = AnnotatedElementUtils.findMergedAnnotation(type, HomaExchange.class);
        if (!type.isInterface() || exchange == null) {
            throw new IllegalStateException("Homa client " + type.getName() + " must be an interface annotated"
                    + " @HomaExchange");
        }
        String service = this.placeholders.apply(exchange.service()).trim();
        if (service.isEmpty()) {
            throw new IllegalStateException("@HomaExchange on " + type.getName() + " must name the service:"
                    + " @HomaExchange(service = \"...\")");
        }
        Duration exchangeTimeout = parseTimeout(exchange.timeout(), "@HomaExchange(timeout) of " + type.getName());
        String codec = HomaSettingsMapper.configuredCodec(this.properties, service);
        if (codec == null && StringUtils.hasText(exchange.codec())) {
            codec = this.placeholders.apply(exchange.codec()).trim();
            if (!this.codecNames.contains(codec)) {
                throw new IllegalStateException("@HomaExchange(codec = \"" + codec + "\") of " + type.getName()
                        + " names an unknown codec; available: " + allowedCodecs() + dataformatHint(codec));
            }
        }
        Map<Method, Plan> plans = new HashMap<>();
        for (Method method : type.getMethods()) {
            if (!Modifier.isAbstract(method.getModifiers()) || Modifier.isStatic(method.getModifiers())
                    || isObjectMethod(method)) {
                continue;
            }
            plans.put(method, plan(type, service, method, exchangeTimeout, codec));
        }
        Object proxy = Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                new Handler(type, service, Map.copyOf(plans)));
        return type.cast(proxy);
    }

    private static boolean isObjectMethod(Method method) {
        return ReflectionUtils.isEqualsMethod(method) || ReflectionUtils.isHashCodeMethod(method)
                || ReflectionUtils.isToStringMethod(method);
    }

    private Plan plan(Class<?> type, String service, Method method, @Nullable Duration exchangeTimeout,
            @Nullable String codec) {
        String label = type.getSimpleName() + "." + method.getName();
        HomaMethod annotation = AnnotatedElementUtils.findMergedAnnotation(method, HomaMethod.class);
        String rpcMethod = rpcMethodName(method, annotation);
        Duration annotatedTimeout = exchangeTimeout;
        boolean idempotent = false;
        if (annotation != null) {
            Duration methodTimeout = parseTimeout(annotation.timeout(), "@HomaMethod(timeout) of " + label);
            if (methodTimeout != null) {
                annotatedTimeout = methodTimeout;
            }
            idempotent = annotation.idempotent();
        }
        Duration timeout = HomaSettingsMapper.configuredTimeout(this.properties, service, rpcMethod);
        if (timeout == null) {
            timeout = annotatedTimeout;
        }
        CallOptions options = new CallOptions(timeout, idempotent, codec, Map.of());
        Class<?> returnType = method.getReturnType();
        Type genericReturnType = GenericTypeResolver.resolveType(method.getGenericReturnType(), type);
        Style style;
        Type resultType;
        Type monoOf = (returnType == Mono.class) ? typeArgument(genericReturnType, label) : null;
        if (monoOf != null && isResponseWrapper(monoOf)) {
            style = Style.MONO_RESPONSE;
            resultType = typeArgument(monoOf, label);
        }
        else if (returnType == HomaResponse.class) {
            style = Style.BLOCK_RESPONSE;
            resultType = typeArgument(genericReturnType, label);
        }
        else if (hasRequestStream(method, label)) {
            if (returnType != Mono.class && returnType != Flux.class) {
                throw new IllegalStateException("Homa client method " + label + " takes a request stream (a Flux"
                        + " parameter), so it must return Mono<T> (client streaming) or Flux<T> (bidirectional"
                        + " streaming), not " + returnType.getSimpleName());
            }
            style = (returnType == Mono.class) ? Style.CHANNEL_MONO : Style.CHANNEL_FLUX;
            resultType = typeArgument(genericReturnType, label);
        }
        else if (monoOf != null) {
            style = Style.MONO;
            resultType = monoOf;
        }
        else if (returnType == Flux.class) {
            style = Style.FLUX;
            resultType = typeArgument(genericReturnType, label);
        }
        else if (returnType == CompletableFuture.class || returnType == CompletionStage.class) {
            style = Style.FUTURE;
            resultType = typeArgument(genericReturnType, label);
        }
        else if (Publisher.class.isAssignableFrom(returnType) || java.util.concurrent.Future.class
                .isAssignableFrom(returnType)) {
            throw new IllegalStateException("Homa client method " + label + " returns " + returnType.getSimpleName()
                    + "; declare Mono<T>, Flux<T>, CompletableFuture<T>, CompletionStage<T>, a plain T or void");
        }
        else if (returnType == void.class || returnType == Void.class) {
            style = Style.BLOCK_VOID;
            resultType = Void.class;
        }
        else {
            style = Style.BLOCK;
            resultType = genericReturnType;
        }
        return new Plan(rpcMethod, resultType, style, options, returnType.isPrimitive() ? returnType : null,
                metadataPositions(method));
    }

    private static boolean isResponseWrapper(Type type) {
        return type == HomaResponse.class
                || (type instanceof ParameterizedType parameterized && parameterized.getRawType() == HomaResponse.class);
    }

    /** The positions of {@link HomaMetadata} parameters: per-call request metadata, not sent as arguments. */
    private static int[] metadataPositions(Method method) {
        Class<?>[] types = method.getParameterTypes();
        return java.util.stream.IntStream.range(0, types.length)
                .filter((i) -> types[i] == HomaMetadata.class)
                .toArray();
    }

    /**
     * Whether the method has a request stream: one {@code Flux} or {@code Publisher} parameter.
     *
     * @throws IllegalStateException for several, or for a {@code Mono} parameter
     */
    private static boolean hasRequestStream(Method method, String label) {
        int count = 0;
        for (Class<?> parameter : method.getParameterTypes()) {
            if (!Publisher.class.isAssignableFrom(parameter)) {
                continue;
            }
            if (parameter != Flux.class && parameter != Publisher.class) {
                throw new IllegalStateException("Homa client method " + label + " has a " + parameter.getSimpleName()
                        + " parameter; a request stream is declared as Flux<T> (or Publisher<T>)");
            }
            count++;
        }
        if (count > 1) {
            throw new IllegalStateException("Homa client method " + label + " has " + count + " Flux parameters;"
                    + " a method takes at most one request stream");
        }
        return count == 1;
    }

    private static Type typeArgument(Type genericType, String label) {
        if (genericType instanceof ParameterizedType parameterized) {
            Type argument = parameterized.getActualTypeArguments()[0];
            if (argument instanceof WildcardType wildcard) {
                Type[] upper = wildcard.getUpperBounds();
                argument = (upper.length > 0) ? upper[0] : Object.class;
            }
            if (argument instanceof Class<?> || argument instanceof ParameterizedType
                    || argument instanceof java.lang.reflect.GenericArrayType) {
                return argument;
            }
        }
        throw new IllegalStateException("Homa client method " + label + " must declare the element type of its "
                + "result, e.g. Mono<String> (found " + genericType.getTypeName() + ")");
    }

    private @Nullable Duration parseTimeout(String value, String what) {
        if (!StringUtils.hasText(value)) {
            return null;
        }
        String resolved = this.placeholders.apply(value).trim();
        Duration timeout;
        try {
            timeout = DurationStyle.detectAndParse(resolved);
        }
        catch (IllegalArgumentException ex) {
            throw new IllegalStateException(what + " is '" + resolved + "', not a duration such as \"2s\" or"
                    + " \"PT2S\"", ex);
        }
        if (timeout.isNegative()) {
            throw new IllegalStateException(what + " is '" + resolved + "'; it must be 0 (no deadline) or positive");
        }
        return timeout;
    }

    /**
     * The service a client interface calls: its {@code @HomaExchange(service)}, placeholders
     * resolved, as {@link #createClient} reads it.
     *
     * @param type an interface annotated {@link HomaExchange @HomaExchange}
     * @throws IllegalStateException naming the interface if it is not annotated or names no service
     */
    public String serviceName(Class<?> type) {
        HomaExchange exchange = AnnotatedElementUtils.findMergedAnnotation(type, HomaExchange.class);
        String service = (exchange != null) ? this.placeholders.apply(exchange.service()).trim() : "";
        if (service.isEmpty()) {
            throw new IllegalStateException("Homa client " + type.getName() + " must be an interface annotated"
                    + " @HomaExchange(service = \"...\")");
        }
        return service;
    }

    /**
     * The remote methods a client interface calls, as {@link #createClient} names them: each
     * abstract method's {@code @HomaMethod(name)}, placeholders resolved, else its Java name.
     *
     * @param type an interface annotated {@link HomaExchange @HomaExchange}
     * @return the method names, sorted
     */
    public Set<String> methodNames(Class<?> type) {
        Set<String> names = new TreeSet<>();
        for (Method method : type.getMethods()) {
            if (!Modifier.isAbstract(method.getModifiers()) || Modifier.isStatic(method.getModifiers())
                    || isObjectMethod(method)) {
                continue;
            }
            names.add(rpcMethodName(method, AnnotatedElementUtils.findMergedAnnotation(method, HomaMethod.class)));
        }
        return Collections.unmodifiableSet(names);
    }

    /** The remote method an interface method calls: {@code @HomaMethod(name)}, placeholders resolved, else its Java name. */
    private String rpcMethodName(Method method, @Nullable HomaMethod annotation) {
        return (annotation != null && StringUtils.hasText(annotation.name()))
                ? this.placeholders.apply(annotation.name()).trim() : method.getName();
    }

    private enum Style {
        MONO, FLUX, FUTURE, BLOCK, BLOCK_VOID, CHANNEL_MONO, CHANNEL_FLUX, MONO_RESPONSE, BLOCK_RESPONSE
    }

    /** How one interface method calls its remote method. */
    private record Plan(String rpcMethod, Type resultType, Style style, CallOptions options,
            @Nullable Class<?> primitive, int[] metadataPositions) {

        /** The wire arguments (without {@link HomaMetadata} ones) and the options with that metadata added. */
        Object[] wireArguments(Object[] values) {
            if (this.metadataPositions.length == 0) {
                return values;
            }
            Object[] wire = new Object[values.length - this.metadataPositions.length];
            for (int i = 0, j = 0, k = 0; i < values.length; i++) {
                if (k < this.metadataPositions.length && this.metadataPositions[k] == i) {
                    k++;
                }
                else {
                    wire[j++] = values[i];
                }
            }
            return wire;
        }

        CallOptions options(Object[] values) {
            if (this.metadataPositions.length == 0) {
                return this.options;
            }
            Map<String, String> metadata = new java.util.LinkedHashMap<>(this.options.metadata());
            for (int position : this.metadataPositions) {
                if (values[position] instanceof HomaMetadata given) {
                    metadata.putAll(given.asMap());
                }
            }
            return this.options.withMetadata(metadata);
        }
    }

    private final class Handler implements InvocationHandler {

        private final Class<?> type;

        private final String service;

        private final Map<Method, Plan> plans;

        Handler(Class<?> type, String service, Map<Method, Plan> plans) {
            this.type = type;
            this.service = service;
            this.plans = plans;
        }

        @Override
        public @Nullable Object invoke(Object proxy, Method method, @Nullable Object @Nullable [] arguments)
                throws Throwable {
            Plan plan = this.plans.get(method);
            if (plan == null) {
                if (ReflectionUtils.isEqualsMethod(method)) {
                    return proxy == arguments[0];
                }
                if (ReflectionUtils.isHashCodeMethod(method)) {
                    return System.identityHashCode(proxy);
                }
                if (ReflectionUtils.isToStringMethod(method)) {
                    return "HomaExchange client " + this.type.getName() + " of service '" + this.service + "'";
                }
                if (method.isDefault()) {
                    return InvocationHandler.invokeDefault(proxy, method, arguments);
                }
                throw new IllegalStateException("not a Homa client method: " + method);
            }
            Object[] given = (arguments != null) ? arguments : new Object[0];
            Object[] values = plan.wireArguments(given);
            CallOptions options = plan.options(given);
            HomaClient client = HomaServiceProxyFactory.this.client;
            return switch (plan.style) {
                case MONO_RESPONSE -> client.callForResponse(this.service, plan.rpcMethod, values, plan.resultType,
                        options);
                case BLOCK_RESPONSE -> client.callForResponse(this.service, plan.rpcMethod, values, plan.resultType,
                        options).block();
                case MONO -> client.call(this.service, plan.rpcMethod, values, plan.resultType, options);
                case FLUX -> client.stream(this.service, plan.rpcMethod, values, plan.resultType, options);
                case CHANNEL_FLUX -> client.channel(this.service, plan.rpcMethod, values, plan.resultType,
                        options);
                case CHANNEL_MONO -> client.channel(this.service, plan.rpcMethod, values, plan.resultType,
                        options).singleOrEmpty();
                case FUTURE -> client.call(this.service, plan.rpcMethod, values, plan.resultType, options)
                        .toFuture();
                case BLOCK_VOID -> {
                    client.call(this.service, plan.rpcMethod, values, Void.class, options).block();
                    yield null;
                }
                case BLOCK -> {
                    Object result = client.call(this.service, plan.rpcMethod, values, plan.resultType, options)
                            .block();
                    if (result == null && plan.primitive != null) {
                        throw new IllegalStateException("Homa call " + this.service + "." + plan.rpcMethod
                                + " returned no value for the primitive result type " + plan.primitive.getName());
                    }
                    yield result;
                }
            };
        }
    }
}
