package dev.errorclass.client;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What one Throwable says beyond its type and message, read by reflection so that no SDK is a
 * compile dependency. Every read is guarded: describing a failure never throws.
 *
 * <ul>
 *   <li><b>HTTP status</b>: {@code statusCode()} (openai-java, anthropic-java, LangChain4j's
 *       HttpException, AWS SDK v2's SdkServiceException), {@code getStatusCode().value()}
 *       (Spring's RestClientResponseException and WebClientResponseException), {@code
 *       getRawStatusCode()} (Spring 5), {@code code()} when it is an int (Retrofit's
 *       HttpException); a number outside 100..599 (AWS's 0 for "none") is no status.
 *   <li><b>gRPC status</b>: {@code getStatus().getCode().value()} (grpc-java's
 *       StatusRuntimeException and StatusException); its name is the code.
 *   <li><b>code</b>: {@code errorType()} (anthropic-java), {@code code()} as text (openai-java's
 *       {@code Optional<String>}), LangChain4j's AnthropicStreamingException {@code type()}, {@code
 *       awsErrorDetails().errorCode()} (AWS), OkHttp's {@code errorCode} field (StreamResetException),
 *       else the error body's code.
 *   <li><b>error body</b>: {@code body()} (openai-java's and anthropic-java's JsonValue), {@code
 *       getResponseBodyAsString()} (Spring), a message that is a JSON object (LangChain4j's
 *       HttpException and the exceptions mapped from it carry the body as their message), the {@code "NNN - {body}"} message of Spring AI's Transient/NonTransientAiException;
 *       read by {@link ErrorBodies} (the one reader every builder uses), whose message is appended when the exception's own does not
 *       carry it.
 *   <li><b>evidence headers</b> (when to retry: {@code retry-after}, the rate-limit resets; {@link
 *       Facts#EVIDENCE_HEADERS}), from the response the exception keeps: {@code headers()}
 *       (openai-java, anthropic-java), {@code awsErrorDetails().sdkHttpResponse().headers()} (AWS
 *       SDK v2), {@code getResponseHeaders()} and {@code getHeaders()} (Spring), {@code
 *       response().headers()} (Retrofit); kept as {@code http.response.header.*} attributes.
 *   <li><b>stream errors</b> (an error event after a stream's 200), read as clients/spec's {@code
 *       stream_error}: openai-java's and anthropic-java's {@code SseException} (whose status, the
 *       stream's 200, is left out), and AWS SDK v2's event-stream exceptions, whose error code is the
 *       event's {@code :exception-type} ({@code throttlingException}, sent as {@code ThrottlingException}).
 * </ul>
 */
record Evidence(Integer httpStatus, Integer grpcStatus, String code, String message, Map<String, String> attributes) {

    private static final Pattern SPRING_AI_MESSAGE = Pattern.compile("^(\\d{3}) - (.*)$", Pattern.DOTALL);

    static Evidence of(Throwable t) {
        String own = safeMessage(t);
        Integer status = httpStatus(t);
        Integer grpc = null;
        String code = "";
        Object grpcCode = call(call(t, "getStatus"), "getCode");
        if (grpcCode instanceof Enum<?> e && t.getClass().getName().startsWith("io.grpc.")) {
            Object value = call(grpcCode, "value");
            if (value instanceof Integer n) {
                grpc = n;
                code = e.name();
            }
        }
        if (code.isEmpty()) {
            code = text(call(t, "errorType"));
        }
        if (code.isEmpty()) {
            code = text(call(t, "code"));
        }
        if (code.isEmpty() && isA(t, "dev.langchain4j.model.anthropic.internal.api.AnthropicStreamingException")) {
            code = text(call(t, "type")); // the Anthropic error.type of a stream's error event
        }
        Object aws = call(t, "awsErrorDetails");
        if (code.isEmpty()) {
            code = text(call(aws, "errorCode"));
            if (!code.isEmpty() && Character.isLowerCase(code.charAt(0)) && code.endsWith("Exception")) {
                // An event stream's exception event (:exception-type throttlingException): the
                // code as the non-stream API spells it, as clients/spec's stream_error reads it.
                code = ErrorBodies.readStream(code, null).code();
                status = null;
            }
        }
        if (code.isEmpty()) {
            Object field = publicField(t, "errorCode");
            code = field instanceof Enum<?> e ? e.name() : "";
        }
        String detail = text(call(t, "errorCode"));
        String body = json(call(t, "body"));
        if (body.isEmpty()) {
            body = text(call(t, "getResponseBodyAsString"));
        }
        if (body.isEmpty() && Text.strip(own).startsWith("{")) {
            // LangChain4j's exceptions (HttpException and the ones its ExceptionMapper makes
            // from it) carry the provider's error body as their message.
            body = own;
        }
        if (isA(t, "org.springframework.ai.retry.TransientAiException")
                || isA(t, "org.springframework.ai.retry.NonTransientAiException")) {
            Matcher m = SPRING_AI_MESSAGE.matcher(own);
            if (m.matches()) {
                status = status != null ? status : Integer.valueOf(m.group(1));
                body = body.isEmpty() ? m.group(2) : body;
            }
        }
        ErrorBodies.Evidence fromBody;
        if (isA(t, "com.openai.errors.SseException") || isA(t, "com.anthropic.errors.SseException")) {
            // An error event after the stream's 200 (openai-java keeps the event's error object,
            // anthropic-java the whole event): read as clients/spec's stream_error, and the
            // stream's own status, 200, is not the error's.
            fromBody = ErrorBodies.readStream(isA(t, "com.anthropic.errors.SseException") ? "error" : "", body);
            status = null;
        } else {
            fromBody = ErrorBodies.read(status, headers(t, aws), body);
        }
        if (code.isEmpty()) {
            code = fromBody.code();
        }
        if (grpc == null) {
            grpc = fromBody.grpcStatus();
        }
        String message = own;
        if (!fromBody.message().isEmpty() && !own.contains(fromBody.message())) {
            message = own.isEmpty() ? fromBody.message() : own + ": " + fromBody.message();
        }
        Map<String, String> attributes = new HashMap<>(fromBody.attributes());
        if (!detail.isEmpty() && !attributes.containsKey("error_code")) {
            attributes.put("error_code", detail);
        }
        return new Evidence(status, grpc, code, message, attributes);
    }

    /** The response headers a provider error kept ({@link Facts#EVIDENCE_HEADERS} and AWS's error type), by name. */
    private static final List<String> WANTED_HEADERS = wantedHeaders();

    private static List<String> wantedHeaders() {
        List<String> out = new ArrayList<>(Facts.EVIDENCE_HEADERS);
        out.add("x-amzn-ErrorType");
        return List.copyOf(out);
    }

    /**
     * The evidence headers of the response an exception keeps: openai-java's and anthropic-java's
     * {@code headers()}, AWS SDK v2's {@code awsErrorDetails().sdkHttpResponse().headers()},
     * Spring's {@code getResponseHeaders()} (RestClientResponseException) and {@code
     * getHeaders()} (WebClientResponseException), Retrofit's {@code response().headers()}.
     */
    static Map<String, String> headers(Throwable t, Object awsDetails) {
        Object[] candidates = {
            call(t, "headers"), call(call(awsDetails, "sdkHttpResponse"), "headers"), call(t, "getResponseHeaders"),
            call(t, "getHeaders"), call(call(t, "response"), "headers"),
        };
        for (Object headers : candidates) {
            if (headers != null) {
                Map<String, String> out = headerValues(headers, WANTED_HEADERS);
                if (!out.isEmpty()) {
                    return out;
                }
            }
        }
        return Map.of();
    }

    /**
     * The first value of each named header of a headers object: a Map of names (any case) to a
     * value or a list of values, or an object with one of {@code values(name)} (openai-java,
     * anthropic-java), {@code firstValue(name)} (java.net.http), {@code getFirst(name)} (Spring),
     * {@code get(name)} (OkHttp).
     */
    static Map<String, String> headerValues(Object headers, List<String> names) {
        Map<String, String> out = new HashMap<>();
        for (String name : names) {
            Object value = null;
            if (headers instanceof Map<?, ?> map) {
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    if (e.getKey() instanceof String key && key.equalsIgnoreCase(name)) {
                        value = e.getValue();
                        break;
                    }
                }
            } else {
                for (String method : new String[] {"values", "firstValue", "getFirst", "get"}) {
                    value = call(headers, method, name);
                    if (value != null) {
                        break;
                    }
                }
            }
            if (value instanceof List<?> list) {
                value = list.isEmpty() ? null : list.get(0);
            }
            if (value instanceof String s) {
                out.put(name, s);
            }
        }
        return out;
    }

    private static Integer httpStatus(Throwable t) {
        for (String name : new String[] {"statusCode", "getStatusCode", "getRawStatusCode", "code"}) {
            Object value = call(t, name);
            if (!(value instanceof Integer) && value != null && !(value instanceof Optional<?>)) {
                value = call(value, "value");
            }
            if (value instanceof Integer n && n >= 100 && n <= 599) {
                return n;
            }
        }
        return null;
    }

    static boolean isA(Throwable t, String className) {
        for (Class<?> c = t.getClass(); c != null; c = c.getSuperclass()) {
            if (c.getName().equals(className)) {
                return true;
            }
        }
        return false;
    }

    static String safeMessage(Throwable t) {
        try {
            String m = t.getMessage();
            return m == null ? "" : m;
        } catch (RuntimeException | LinkageError e) {
            return "";
        }
    }

    /** A public no-argument method's result, unwrapping Optional; null when absent or failing. */
    static Object call(Object target, String name) {
        if (target == null) {
            return null;
        }
        try {
            Method m = publicMethod(target.getClass(), name);
            if (m == null || m.getParameterCount() != 0) {
                return null;
            }
            Object value = m.invoke(target);
            return value instanceof Optional<?> o ? o.orElse(null) : value;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null;
        }
    }

    /** A public one-String-argument method's result, unwrapping Optional; null when absent or failing. */
    static Object call(Object target, String name, String argument) {
        if (target == null) {
            return null;
        }
        try {
            Method m = publicMethod(target.getClass(), name, String.class);
            if (m == null) {
                return null;
            }
            Object value = m.invoke(target, argument);
            return value instanceof Optional<?> o ? o.orElse(null) : value;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null;
        }
    }

    /**
     * The method as a public class or interface declares it: an implementation class may be
     * internal (java.net.http's {@code jdk.internal.net.http.HttpResponseImpl}) while the
     * interface it implements ({@code HttpResponse}) is public and callable.
     */
    private static Method publicMethod(Class<?> type, String name, Class<?>... parameters) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            Method m = declared(c, name, parameters);
            if (m != null) {
                return m;
            }
            for (Class<?> i : c.getInterfaces()) {
                Method viaInterface = declared(i, name, parameters);
                if (viaInterface != null) {
                    return viaInterface;
                }
            }
        }
        return null;
    }

    private static Method declared(Class<?> c, String name, Class<?>... parameters) {
        if (!Modifier.isPublic(c.getModifiers()) || c.getModule().isNamed() && !c.getModule().isExported(c.getPackageName())) {
            return null;
        }
        try {
            return c.getMethod(name, parameters);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    private static Object publicField(Object target, String name) {
        try {
            Field f = target.getClass().getField(name);
            return Modifier.isPublic(f.getDeclaringClass().getModifiers()) ? f.get(target) : null;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null;
        }
    }

    /**
     * A body as JSON text: a string as it is; openai-java's and anthropic-java's {@code JsonValue}
     * written by the SDK's own Jackson mapper ({@code core.ObjectMappers.jsonMapper()}), since its
     * {@code toString()} is not JSON ({@code {code=rate_limit_exceeded, ...}}); "" otherwise.
     */
    static String json(Object value) {
        if (value instanceof CharSequence s) {
            return s.toString();
        }
        String type = value == null ? "" : value.getClass().getName();
        for (String sdk : new String[] {"com.openai.", "com.anthropic."}) {
            if (type.startsWith(sdk)) {
                try {
                    Class<?> mappers = Class.forName(sdk + "core.ObjectMappers", true, value.getClass().getClassLoader());
                    Object mapper = mappers.getMethod("jsonMapper").invoke(null);
                    Object text = mapper.getClass().getMethod("writeValueAsString", Object.class).invoke(mapper, value);
                    return text instanceof String s ? s : "";
                } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                    return "";
                }
            }
        }
        return "";
    }

    /**
     * A string, or a Stainless SDK value (openai-java's and anthropic-java's JsonValue, enums
     * such as ErrorType), as text; a number or anything else is no code (Retrofit's {@code code()}
     * is the HTTP status).
     */
    private static String text(Object value) {
        if (value instanceof CharSequence s) {
            return Text.strip(s.toString());
        }
        String type = value == null ? "" : value.getClass().getName();
        if (type.startsWith("com.openai.") || type.startsWith("com.anthropic.")) {
            return Text.strip(value.toString());
        }
        return "";
    }
}
