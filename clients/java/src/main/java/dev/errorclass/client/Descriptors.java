package dev.errorclass.client;

import dev.errorclass.v1.Cause;
import dev.errorclass.v1.ExceptionDescriptor;
import dev.errorclass.v1.Origin;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The descriptor a Java runtime sends for a Throwable.
 *
 * <ul>
 *   <li><b>type</b>: {@code getClass().getName()}, the binary name stack traces and logs print
 *       (a nested class is {@code Outer$Inner}).
 *   <li><b>supertypes</b>: the superclass chain up to and including {@code java.lang.Throwable},
 *       most specific first. Interfaces are not listed: every Throwable is Serializable, a
 *       {@code catch} cannot name an interface, and a marker interface that matters can travel
 *       as an attribute.
 *   <li><b>causes</b>: the {@code getCause()} chain, outermost first, each Throwable once
 *       (an identity set guards against cycles), at most {@link Facts#MAX_CAUSES}.
 *       <b>Suppressed exceptions are not causes</b>: a rule's {@code cause:} matches any cause,
 *       so a suppressed {@code close()} failure (say a SocketTimeoutException from
 *       try-with-resources) would otherwise reclassify the primary failure.
 *   <li><b>HTTP status, gRPC status, code, error body</b>: read from each level by
 *       reflection (see {@link Evidence}), so that no SDK is a compile dependency.
 *   <li><b>limits</b>: message, code, supertypes, causes and attributes are cut to the limits
 *       of classifier/limits.py ({@link Facts}, generated), so a descriptor is never refused
 *       for its size.
 * </ul>
 *
 * <p>Origin and provider are the caller's knowledge (where the call was made, to whom); they
 * are never guessed from the exception. Describing never throws.
 */
public final class Descriptors {
    /** The descriptor's {@code language}. */
    public static final String LANGUAGE = "java";

    private Descriptors() {}

    /** The descriptor of {@code error}, raised at {@code origin}, calling {@code provider} (or "" ). */
    public static ExceptionDescriptor from(Throwable error, Origin origin, String provider) {
        return from(error, origin, provider, RuntimeFacts.NONE);
    }

    /** As {@link #from(Throwable, Origin, String)}, with what only the runtime knows. */
    public static ExceptionDescriptor from(Throwable error, Origin origin, String provider, RuntimeFacts facts) {
        if (error == null) {
            throw new IllegalArgumentException("error is required");
        }
        Evidence top = Evidence.of(error);
        ExceptionDescriptor.Builder d = ExceptionDescriptor.newBuilder()
                .setType(typeName(error.getClass()))
                .addAllSupertypes(supertypes(error.getClass()))
                .setOrigin(origin == null ? Origin.ORIGIN_UNSPECIFIED : origin)
                .setCode(cut(top.code(), Facts.MAX_CODE_CHARS))
                .setMessage(cut(top.message(), Facts.MAX_MESSAGE_CHARS))
                .setLanguage(LANGUAGE)
                .setProvider(cut(provider == null ? "" : provider.strip().toLowerCase(Locale.ROOT), Facts.MAX_LABEL_CHARS));
        if (top.httpStatus() != null) {
            d.setHttpStatus(top.httpStatus());
        }
        if (top.grpcStatus() != null) {
            d.setGrpcStatus(top.grpcStatus());
        }
        Map<String, String> attributes = new LinkedHashMap<>(top.attributes());
        for (Throwable cause : causes(error)) {
            Evidence e = Evidence.of(cause);
            Cause.Builder c = Cause.newBuilder()
                    .setType(typeName(cause.getClass()))
                    .addAllSupertypes(supertypes(cause.getClass()))
                    .setCode(cut(e.code(), Facts.MAX_CODE_CHARS))
                    .setMessage(cut(e.message(), Facts.MAX_MESSAGE_CHARS));
            if (e.httpStatus() != null) {
                c.setHttpStatus(e.httpStatus());
            }
            if (e.grpcStatus() != null) {
                c.setGrpcStatus(e.grpcStatus());
            }
            e.attributes().forEach(attributes::putIfAbsent);
            d.addCauses(c);
        }
        if (facts != null) {
            attributes.putAll(facts.attributes());
        }
        attributes.forEach((k, v) -> {
            if (d.getAttributesCount() < Facts.MAX_ATTRIBUTES && !k.isEmpty() && k.length() <= Facts.MAX_ATTRIBUTE_KEY_CHARS) {
                d.putAttributes(k, cut(v, Facts.MAX_ATTRIBUTE_VALUE_CHARS));
            }
        });
        return d.build();
    }

    /**
     * The descriptor of an HTTP response with an error status (400 and up) that a raw client
     * ({@code java.net.http.HttpResponse}, OkHttp's {@code Response}) returned without throwing;
     * {@code null} for any other status. The status is read by reflection ({@code statusCode()},
     * {@code code()}), the {@code x-amzn-ErrorType} header too ({@code headers().firstValue},
     * {@code header}), and {@code body} (the text the caller read) as {@link ErrorBodies} reads it.
     * The type is the response's class, the message the status and the provider's message.
     */
    public static ExceptionDescriptor fromHttpResponse(Object response, String body, Origin origin, String provider) {
        Integer status = null;
        for (String name : new String[] {"statusCode", "code"}) {
            if (status == null && Evidence.call(response, name) instanceof Integer n && n >= 100 && n <= 599) {
                status = n;
            }
        }
        if (response == null || status == null || status < 400) {
            return null;
        }
        Object headers = Evidence.call(response, "headers");
        Object aws = null;
        try {
            aws = headers == null ? null : headers.getClass().getMethod("firstValue", String.class).invoke(headers, "x-amzn-ErrorType");
        } catch (ReflectiveOperationException | RuntimeException e) {
            try {
                aws = response.getClass().getMethod("header", String.class).invoke(response, "x-amzn-ErrorType");
            } catch (ReflectiveOperationException | RuntimeException e2) {
                aws = null;
            }
        }
        if (aws instanceof java.util.Optional<?> o) {
            aws = o.orElse(null);
        }
        ErrorBodies.Evidence e = ErrorBodies.read(body, aws instanceof String a ? a : null, status);
        String head = Integer.toString(status);
        ExceptionDescriptor.Builder d = ExceptionDescriptor.newBuilder()
                .setType(typeName(response.getClass()))
                .addAllSupertypes(List.of())
                .setHttpStatus(status)
                .setOrigin(origin == null ? Origin.ORIGIN_UNSPECIFIED : origin)
                .setCode(cut(e.code(), Facts.MAX_CODE_CHARS))
                .setMessage(cut(e.message().isEmpty() ? head : head + "\n" + e.message(), Facts.MAX_MESSAGE_CHARS))
                .setLanguage(LANGUAGE)
                .setProvider(cut(provider == null ? "" : provider.strip().toLowerCase(Locale.ROOT), Facts.MAX_LABEL_CHARS))
                .putAllAttributes(e.attributes());
        if (e.grpcStatus() != null) {
            d.setGrpcStatus(e.grpcStatus());
        }
        return d.build();
    }

    /** The type of a response that ended with a failure finish or stop reason. */
    public static final String FINISH_REASON = "errorclass.FinishReason";
    /** The type of a prompt the provider refused before generating. */
    public static final String PROMPT_BLOCKED = "errorclass.PromptBlocked";
    /** The supertype of both. */
    public static final String RESPONSE_FAILURE = "errorclass.ResponseFailure";

    /**
     * A failure that is no exception: a call that returned normally but ended with the
     * provider refusing or filtering (OpenAI's {@code finish_reason: content_filter},
     * Anthropic's {@code stop_reason: refusal}, Bedrock Converse's {@code stopReason:
     * guardrail_intervened}, Gemini's {@code SAFETY}), as docs/clients.md's convention and the
     * Python and Node helpers send it; {@code null} when the reason is no failure (a normal
     * stop, and a length cut-off, which the taxonomy leaves Unknown). With {@code promptBlocked}
     * (Gemini's promptFeedback.blockReason) every block reason is a failure. {@code reason} is
     * spelled exactly as the API spells it; {@code model} may be empty.
     */
    public static ExceptionDescriptor fromFinishReason(String reason, String provider, boolean promptBlocked, String model) {
        String name = reason == null ? "" : reason.strip();
        String p = provider == null ? "" : provider.strip().toLowerCase(Locale.ROOT);
        String type;
        String message;
        if (promptBlocked) {
            if (Facts.NOT_BLOCKED.contains(name)) {
                return null;
            }
            type = PROMPT_BLOCKED;
            message = "The " + p + " API blocked the prompt (" + name + ").";
        } else if (Facts.FAILURE_REASONS.contains(name)) {
            type = FINISH_REASON;
            message = "The " + p + " response ended with the failure finish reason " + name + ".";
        } else {
            return null;
        }
        ExceptionDescriptor.Builder d = ExceptionDescriptor.newBuilder()
                .setType(type)
                .addSupertypes(RESPONSE_FAILURE)
                .setOrigin(Origin.ORIGIN_PROVIDER)
                .setCode(cut(name, Facts.MAX_CODE_CHARS))
                .setMessage(message)
                .setLanguage(LANGUAGE)
                .setProvider(cut(p, Facts.MAX_LABEL_CHARS));
        if (model != null && !model.isBlank()) {
            d.putAttributes("model", cut(model.strip(), Facts.MAX_ATTRIBUTE_VALUE_CHARS));
        }
        return d.build();
    }

    /**
     * The superclass chain of {@code type} as a descriptor sends it: most specific first,
     * ending at java.lang.Throwable (for a Throwable), at most {@link Facts#MAX_SUPERTYPES}.
     */
    public static List<String> supertypes(Class<?> type) {
        List<String> out = new ArrayList<>();
        for (Class<?> c = type.getSuperclass(); c != null && c != Object.class; c = c.getSuperclass()) {
            if (out.size() == Facts.MAX_SUPERTYPES) {
                break;
            }
            out.add(typeName(c));
        }
        return out;
    }

    /** The getCause() chain below {@code error}, outermost first, each Throwable once, bounded. */
    static List<Throwable> causes(Throwable error) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        seen.add(error);
        List<Throwable> out = new ArrayList<>();
        Throwable next = causeOf(error);
        while (next != null && seen.add(next) && out.size() < Facts.MAX_CAUSES) {
            out.add(next);
            next = causeOf(next);
        }
        return out;
    }

    private static Throwable causeOf(Throwable t) {
        try {
            return t.getCause();
        } catch (RuntimeException | LinkageError e) {
            return null;
        }
    }

    private static String typeName(Class<?> c) {
        return cut(c.getName(), Facts.MAX_TYPE_NAME_CHARS);
    }

    static String cut(String text, int limit) {
        if (text == null) {
            return "";
        }
        if (text.length() <= limit) {
            return text;
        }
        int end = limit;
        if (Character.isHighSurrogate(text.charAt(end - 1))) {
            end--; // never send half a character
        }
        return text.substring(0, end);
    }
}
