package dev.errorclass.client;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.HashMap;
import java.util.Map;

/**
 * A provider's HTTP error, read as every errorclass client reads it (clients/spec/README.md,
 * {@code error_body}; the vectors of clients/spec/vectors/error_body.json prove it):
 *
 * <ol>
 *   <li><b>AWS JSON</b> (Bedrock): the header {@code x-amzn-ErrorType} when not blank, else the
 *       body's {@code __type}; its text before the first {@code :}, after the last {@code #},
 *       is the code, the body's {@code message} (else {@code Message}) the message.
 *   <li>An <b>{@code error} object</b>: Anthropic's ({@code {"type": "error", "error":
 *       {"type", "message", "details": {"error_code"}}}}: the code is {@code error.type}, the
 *       detail the attribute {@code error_code}); Google's ({@code error.status} a gRPC status
 *       name: the code, and the gRPC status); else OpenAI's and Azure's {@code error.code}.
 *   <li>A text {@code error} ({@code {"error": "model not found"}}) is the message.
 *   <li>A body with a text {@code message} and no {@code error} is the error object itself
 *       (an SDK that keeps the inner object, a provider with no envelope), read as in 2
 *       without the Anthropic case.
 * </ol>
 *
 * <p>Whatever the body, the evidence a runtime needs to retry well is kept as attributes: the
 * retry and rate-limit headers of {@link Facts#EVIDENCE_HEADERS} ({@code
 * http.response.header.retry-after}) and a Google error's {@code details} ({@link
 * Facts#GOOGLE_DETAILS}: RetryInfo's delay, ErrorInfo's reason, QuotaFailure's quota), from
 * which the service computes {@code retry_after}. An error event inside a stream that began
 * with a 200 is {@link #readStream} (clients/spec, {@code stream_error}).
 *
 * <p>Nothing is invented: a code that only repeats the HTTP status (Azure's {@code "429"}) is
 * no code; a body over {@link Facts#MAX_BODY_BYTES} UTF-8 bytes, not JSON or not an object
 * gives nothing from the body.
 */
public final class ErrorBodies {
    private static final String AWS_ERROR_TYPE = "x-amzn-ErrorType";
    private static final String RESPONSE_FAILED = "response.failed";

    /** What an HTTP error says: the provider's code, a gRPC status, its message, extra attributes. */
    public record Evidence(String code, Integer grpcStatus, String message, Map<String, String> attributes) {
        public static final Evidence NONE = new Evidence("", null, "", Map.of());

        public Evidence {
            attributes = Map.copyOf(attributes);
        }

        public boolean isEmpty() {
            return code.isEmpty() && grpcStatus == null && message.isEmpty() && attributes.isEmpty();
        }
    }

    private ErrorBodies() {}

    /**
     * The evidence of an HTTP error: its status (null when unknown), its headers (names in any
     * case; null for none) and its body as text (null for none). Besides the body's code and
     * message, the headers of {@link Facts#EVIDENCE_HEADERS} (when to retry, the provider's
     * clock) become attributes {@link Facts#HEADER_ATTRIBUTE_PREFIX} + the lower-case name, and
     * a Google error's {@code details} the attributes of {@link Facts#GOOGLE_DETAILS}, each
     * value stripped and cut to {@link Facts#MAX_EVIDENCE_CHARS} characters.
     */
    public static Evidence read(Integer status, Map<String, String> headers, String body) {
        Evidence fromBody = readBody(status, header(headers, AWS_ERROR_TYPE), body);
        Map<String, String> kept = headers(headers);
        if (kept.isEmpty()) {
            return fromBody;
        }
        kept.putAll(fromBody.attributes());
        return new Evidence(fromBody.code(), fromBody.grpcStatus(), fromBody.message(), kept);
    }

    /**
     * The evidence of an error event inside a stream that began with a 200 (clients/spec,
     * {@code stream_error}): {@code event} is the SSE event's name, or a Bedrock exception
     * event's type ({@code throttlingException}; empty or null when none), {@code data} the
     * event's data as text. A Bedrock exception event gives the code as the non-stream API
     * spells it ({@code ThrottlingException}) and its payload's message; anything else is read
     * as an error body with no status and no headers, a Responses API {@code response.failed}
     * event's error being its {@code response.error}.
     */
    public static Evidence readStream(String event, String data) {
        String name = Text.strip(event);
        JsonObject payload = data != null && Text.utf8Length(data) <= Facts.MAX_BODY_BYTES
                ? Json.object(Json.parse(data)) : null;
        if (name.endsWith("Exception")) {
            int first = name.codePointAt(0);
            String code = new StringBuilder().appendCodePoint(Character.toUpperCase(first))
                    .append(name, Character.charCount(first), name.length()).toString();
            String message = payload == null ? "" : Json.text(payload.get("message"));
            if (message.isEmpty() && payload != null) {
                message = Json.text(payload.get("Message"));
            }
            return new Evidence(code, null, message, Map.of());
        }
        if (payload != null && (name.equals(RESPONSE_FAILED) || isText(payload.get("type"), RESPONSE_FAILED))) {
            JsonObject error = Json.object(Json.object(payload, "response"), "error");
            return error == null ? Evidence.NONE : errorObject(error, false, null);
        }
        return readBody(null, null, data);
    }

    /** The body's evidence, and a Google error's details; the AWS error type header aside. */
    private static Evidence readBody(Integer status, String awsHeader, String body) {
        JsonObject data = body != null && Text.utf8Length(body) <= Facts.MAX_BODY_BYTES
                ? Json.object(Json.parse(body)) : null;
        if (data == null) {
            data = new JsonObject();
        }
        String aws = awsType(awsHeader, data);
        if (!aws.isEmpty()) {
            String message = Json.text(data.get("message"));
            return new Evidence(aws, null, message.isEmpty() ? Json.text(data.get("Message")) : message, Map.of());
        }
        JsonElement error = data.get("error");
        if (error != null && error.isJsonObject()) {
            boolean anthropic = isText(data.get("type"), "error");
            return errorObject(error.getAsJsonObject(), anthropic, status);
        }
        if (Json.isText(error)) {
            return new Evidence("", null, Json.text(error), Map.of());
        }
        if ((error == null || error.isJsonNull()) && Json.isText(data.get("message"))) {
            return errorObject(data, false, status);
        }
        return Evidence.NONE;
    }

    /** The kept evidence headers, as attributes (a modifiable map). */
    private static Map<String, String> headers(Map<String, String> headers) {
        Map<String, String> out = new HashMap<>();
        if (headers == null || headers.isEmpty()) {
            return out;
        }
        for (String name : Facts.EVIDENCE_HEADERS) {
            String value = Text.strip(header(headers, name));
            if (!value.isEmpty()) {
                out.put(Facts.HEADER_ATTRIBUTE_PREFIX + name, Text.cut(value, Facts.MAX_EVIDENCE_CHARS));
            }
        }
        return out;
    }

    /**
     * The attributes a google.rpc.Status's {@code details} give: for each of {@link
     * Facts#GOOGLE_DETAILS}, the first item of its type, its field when that is text.
     */
    private static Map<String, String> details(JsonObject error) {
        JsonElement details = error.get("details");
        if (details == null || !details.isJsonArray()) {
            return Map.of();
        }
        Map<String, String> out = new HashMap<>();
        for (Facts.GoogleDetail wanted : Facts.GOOGLE_DETAILS) {
            for (JsonElement item : details.getAsJsonArray()) {
                JsonObject detail = Json.object(item);
                if (detail != null && isText(detail.get("@type"), wanted.typeUrl())) {
                    String value = Json.text(Json.at(detail, wanted.field()));
                    if (!value.isEmpty()) {
                        out.put(wanted.attribute(), Text.cut(value, Facts.MAX_EVIDENCE_CHARS));
                    }
                    break;
                }
            }
        }
        return out;
    }

    private static boolean isText(JsonElement value, String text) {
        return Json.isText(value) && value.getAsString().equals(text);
    }

    /** An error object: Anthropic's (when the body's type is "error"), Google's, or OpenAI's. */
    private static Evidence errorObject(JsonObject error, boolean anthropic, Integer status) {
        String message = Json.text(error.get("message"));
        Map<String, String> attributes = new HashMap<>(details(error));
        if (anthropic && Json.isText(error.get("type"))) {
            JsonObject details = Json.object(error, "details");
            String detail = details == null ? "" : Json.text(details.get("error_code"));
            if (!detail.isEmpty()) {
                attributes.put("error_code", detail);
            }
            return new Evidence(Json.text(error.get("type")), null, message, attributes);
        }
        if (Json.isText(error.get("status"))) {
            String google = error.get("status").getAsString();
            int number = Facts.GRPC_CODE_NAMES.indexOf(google);
            if (number >= 0) {
                return new Evidence(google, number, message, attributes);
            }
        }
        String code = Json.code(error.get("code"));
        if (status != null && code.equals(Integer.toString(status))) {
            code = "";
        }
        return new Evidence(code, null, message, attributes);
    }

    /** The header's value by name in any case, or null. */
    static String header(Map<String, String> headers, String name) {
        if (headers == null) {
            return null;
        }
        for (Map.Entry<String, String> h : headers.entrySet()) {
            if (h.getKey() != null && h.getKey().equalsIgnoreCase(name)) {
                return h.getValue();
            }
        }
        return null;
    }

    /** {@code ThrottlingException:http://...} or {@code com.amazon.coral#ValidationException}: the name. */
    private static String awsType(String header, JsonObject body) {
        String value = header;
        if (value == null || Text.strip(value).isEmpty()) {
            value = Json.isText(body.get("__type")) ? body.get("__type").getAsString() : null;
        }
        if (value == null) {
            return "";
        }
        int colon = value.indexOf(':');
        String head = colon < 0 ? value : value.substring(0, colon);
        return Text.strip(head.substring(head.lastIndexOf('#') + 1));
    }
}
