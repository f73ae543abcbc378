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
 * The descriptor a Java runtime sends for a failure: a {@code Throwable} ({@link #from}), an
 * HTTP error response a raw client returned ({@link #fromHttpResponse}), or a response that
 * ended with a refusal ({@link #fromFinishReason}, {@link #fromResponse}).
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
 *   <li><b>limits</b>: every builder ends with {@link #fit}, so a descriptor it built is never
 *       refused for its size (characters counted as code points, as the service counts them).
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
                .setType(error.getClass().getName())
                .addAllSupertypes(supertypes(error.getClass()))
                .setOrigin(origin == null ? Origin.ORIGIN_UNSPECIFIED : origin)
                .setCode(top.code())
                .setMessage(top.message())
                .setLanguage(LANGUAGE)
                .setProvider(provider == null ? "" : provider);
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
                    .setType(cause.getClass().getName())
                    .addAllSupertypes(supertypes(cause.getClass()))
                    .setCode(e.code())
                    .setMessage(e.message());
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
        return fit(d.putAllAttributes(attributes).build());
    }

    /**
     * The descriptor of an HTTP response with an error status (400 and up) that a raw client
     * ({@code java.net.http.HttpResponse}, OkHttp's {@code Response}) returned without throwing;
     * {@code null} for any other status. The status is read by reflection ({@code statusCode()},
     * {@code code()}), its headers ({@code headers().firstValue}, {@code headers().get}: the
     * evidence headers, {@code retry-after} and the rate-limit resets, and AWS's {@code
     * x-amzn-ErrorType}), and {@code body} (the text the caller read) as {@link ErrorBodies} reads it.
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
        ErrorBodies.Evidence e = ErrorBodies.read(status, responseHeaders(response), body);
        String head = Integer.toString(status);
        ExceptionDescriptor.Builder d = ExceptionDescriptor.newBuilder()
                .setType(response.getClass().getName())
                .setHttpStatus(status)
                .setOrigin(origin == null ? Origin.ORIGIN_UNSPECIFIED : origin)
                .setCode(e.code())
                .setMessage(e.message().isEmpty() ? head : head + "\n" + e.message())
                .setLanguage(LANGUAGE)
                .setProvider(provider == null ? "" : provider)
                .putAllAttributes(e.attributes());
        if (e.grpcStatus() != null) {
            d.setGrpcStatus(e.grpcStatus());
        }
        return fit(d.build());
    }

    /**
     * The evidence headers ({@link Facts#EVIDENCE_HEADERS}) and AWS's {@code x-amzn-ErrorType} of
     * java.net.http's ({@code headers().firstValue}) or OkHttp's ({@code headers().get}) response.
     */
    private static Map<String, String> responseHeaders(Object response) {
        Object headers = Evidence.call(response, "headers");
        if (headers == null) {
            return Map.of();
        }
        List<String> names = new ArrayList<>(Facts.EVIDENCE_HEADERS);
        names.add("x-amzn-ErrorType");
        return Evidence.headerValues(headers, names);
    }

    /**
     * A failure that is no exception: a call that returned normally but ended with the
     * provider refusing or filtering (OpenAI's {@code finish_reason: content_filter},
     * Anthropic's {@code stop_reason: refusal}, Bedrock Converse's {@code stopReason:
     * guardrail_intervened}, Gemini's {@code SAFETY}; {@link Facts#FAILURE_REASONS} of any
     * provider, since an API is reached under many names), as every errorclass client sends
     * it; {@code null} when the reason is no failure (a normal stop, and a length cut-off,
     * which the taxonomy leaves Unknown). With {@code promptBlocked} (Gemini's
     * promptFeedback.blockReason) every block reason but {@link Facts#NOT_BLOCKED} is a
     * failure. {@code reason} is compared as the API spells it (stripped); {@code model} may
     * be empty.
     */
    public static ExceptionDescriptor fromFinishReason(String reason, String provider, boolean promptBlocked, String model) {
        String name = Text.strip(reason);
        String p = Limits.label(provider);
        String type;
        String template;
        if (promptBlocked) {
            if (Facts.NOT_BLOCKED.contains(name)) {
                return null;
            }
            type = Facts.PROMPT_BLOCKED_TYPE;
            template = Facts.PROMPT_BLOCKED_MESSAGE;
        } else if (Facts.FAILURE_REASONS.values().stream().anyMatch(reasons -> reasons.contains(name))) {
            type = Facts.FINISH_REASON_TYPE;
            template = Facts.FINISH_REASON_MESSAGE;
        } else {
            return null;
        }
        ExceptionDescriptor.Builder d = ExceptionDescriptor.newBuilder()
                .setType(type)
                .addSupertypes(Facts.RESPONSE_FAILURE_TYPE)
                .setOrigin(Origin.ORIGIN_PROVIDER)
                .setCode(name)
                .setMessage(template.replace("{provider}", p).replace("{reason}", name))
                .setLanguage(LANGUAGE)
                .setProvider(p);
        String m = Text.strip(model);
        if (!m.isEmpty()) {
            d.putAttributes("model", m);
        }
        return fit(d.build());
    }

    /**
     * The descriptor of a provider API's response that ended with a refusal or a filter, or
     * {@code null}: {@code json} is the response as the API sent it (a chat completion, a
     * Responses API response, an Anthropic message, a Gemini or Bedrock Converse response),
     * or a JSON array of a stream's chunks or events. {@code provider} (null or "" for the
     * API's own name) says who answered: {@code azure} for Azure OpenAI. See {@link Responses}.
     */
    public static ExceptionDescriptor fromResponse(String json, String provider) {
        return Responses.describe(Json.parse(json), provider);
    }

    /**
     * {@code d} cut to the service's limits so that it is never refused (clients/spec/README.md,
     * {@code fit}): names stripped and cut, empty supertypes and causes without a type dropped,
     * lists cut, lone surrogates replaced, statuses out of range left out, labels lower-cased,
     * attributes with an empty or over-long key dropped and at most {@link Facts#MAX_ATTRIBUTES}
     * kept (the keys first in code-point order). Every builder here ends with it.
     */
    public static ExceptionDescriptor fit(ExceptionDescriptor d) {
        return Limits.fit(d);
    }

    /**
     * {@code d} as the service would accept it (names stripped, labels lower-cased, the message
     * cut), or {@link InvalidDescriptorException} naming every field the service would refuse
     * ({@code descriptor.causes[1].type}), as a classify call would; no network.
     */
    public static ExceptionDescriptor validate(ExceptionDescriptor d) {
        return Limits.validate(d);
    }

    /** The origin a name stands for ({@code provider}, {@code tool}, {@code caller}...), or null. */
    public static Origin origin(String name) {
        String n = Text.strip(name).toLowerCase(Locale.ROOT);
        n = Facts.ORIGIN_ALIASES.getOrDefault(n, n);
        int number = Facts.ORIGIN_NAMES.indexOf(n);
        return number < 0 ? null : Origin.forNumber(number);
    }

    /** The name of an origin ({@code ORIGIN_PROVIDER} is {@code provider}). */
    public static String originName(Origin origin) {
        int n = origin.getNumber();
        return n >= 0 && n < Facts.ORIGIN_NAMES.size() ? Facts.ORIGIN_NAMES.get(n) : Integer.toString(n);
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
            out.add(c.getName());
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
}
