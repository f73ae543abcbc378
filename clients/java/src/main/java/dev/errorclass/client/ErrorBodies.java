package dev.errorclass.client;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
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
 * <p>Nothing is invented: a code that only repeats the HTTP status (Azure's {@code "429"}) is
 * no code; a body over {@link Facts#MAX_BODY_BYTES} UTF-8 bytes, not JSON or not an object
 * gives nothing.
 */
public final class ErrorBodies {
    private static final String AWS_ERROR_TYPE = "x-amzn-ErrorType";

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
     * case; null for none) and its body as text (null for none).
     */
    public static Evidence read(Integer status, Map<String, String> headers, String body) {
        JsonObject data = body != null && Text.utf8Length(body) <= Facts.MAX_BODY_BYTES
                ? Json.object(Json.parse(body)) : null;
        if (data == null) {
            data = new JsonObject();
        }
        String aws = awsType(header(headers, AWS_ERROR_TYPE), data);
        if (!aws.isEmpty()) {
            String message = Json.text(data.get("message"));
            return new Evidence(aws, null, message.isEmpty() ? Json.text(data.get("Message")) : message, Map.of());
        }
        JsonElement error = data.get("error");
        if (error != null && error.isJsonObject()) {
            boolean anthropic = Json.isText(data.get("type")) && data.get("type").getAsString().equals("error");
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

    /** An error object: Anthropic's (when the body's type is "error"), Google's, or OpenAI's. */
    private static Evidence errorObject(JsonObject error, boolean anthropic, Integer status) {
        String message = Json.text(error.get("message"));
        if (anthropic && Json.isText(error.get("type"))) {
            JsonObject details = Json.object(error, "details");
            String detail = details == null ? "" : Json.text(details.get("error_code"));
            return new Evidence(Json.text(error.get("type")), null, message,
                    detail.isEmpty() ? Map.of() : Map.of("error_code", detail));
        }
        if (Json.isText(error.get("status"))) {
            String google = error.get("status").getAsString();
            int number = Facts.GRPC_CODE_NAMES.indexOf(google);
            if (number >= 0) {
                return new Evidence(google, number, message, Map.of());
            }
        }
        String code = Json.code(error.get("code"));
        if (status != null && code.equals(Integer.toString(status))) {
            code = "";
        }
        return new Evidence(code, null, message, Map.of());
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
