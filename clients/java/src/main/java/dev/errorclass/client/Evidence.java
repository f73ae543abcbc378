package dev.errorclass.client;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
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
        if (code.isEmpty()) {
            code = text(call(call(t, "awsErrorDetails"), "errorCode"));
        }
        if (code.isEmpty()) {
            Object field = publicField(t, "errorCode");
            code = field instanceof Enum<?> e ? e.name() : "";
        }
        String detail = text(call(t, "errorCode"));
        String body = text(call(t, "body"));
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
        ErrorBodies.Evidence fromBody = ErrorBodies.read(status, null, body);
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
        Map<String, String> attributes = fromBody.attributes();
        if (!detail.isEmpty() && attributes.isEmpty()) {
            attributes = Map.of("error_code", detail);
        }
        return new Evidence(status, grpc, code, message, attributes);
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

    /**
     * The method as a public class or interface declares it: an implementation class may be
     * internal (java.net.http's {@code jdk.internal.net.http.HttpResponseImpl}) while the
     * interface it implements ({@code HttpResponse}) is public and callable.
     */
    private static Method publicMethod(Class<?> type, String name) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            Method m = declared(c, name);
            if (m != null) {
                return m;
            }
            for (Class<?> i : c.getInterfaces()) {
                Method viaInterface = declared(i, name);
                if (viaInterface != null) {
                    return viaInterface;
                }
            }
        }
        return null;
    }

    private static Method declared(Class<?> c, String name) {
        if (!Modifier.isPublic(c.getModifiers()) || c.getModule().isNamed() && !c.getModule().isExported(c.getPackageName())) {
            return null;
        }
        try {
            return c.getMethod(name);
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
