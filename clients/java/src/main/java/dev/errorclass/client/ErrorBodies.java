package dev.errorclass.client;

import java.util.Map;

/**
 * The provider's error body, read as classifier/client/http_bodies.py reads it.
 *
 * <ul>
 *   <li>OpenAI, Azure OpenAI: {@code {"error": {"code", "message", "type", "param"}}}; the code
 *       is {@code error.code}.
 *   <li>Anthropic: {@code {"type": "error", "error": {"type", "message", "details":
 *       {"error_code"}}}}; the code is {@code error.type}, and {@code details.error_code} is the
 *       attribute {@code error_code}.
 *   <li>Gemini and Google APIs: {@code {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}};
 *       the code is {@code error.status}, and so is the gRPC status.
 *   <li>Bedrock (AWS JSON): the {@code x-amzn-ErrorType} header, else the body's {@code __type}
 *       ({@code ...#ValidationException}); the code is that error type.
 * </ul>
 *
 * <p>Nothing is invented: a code that only repeats the HTTP status (Azure's {@code "code":
 * "429"}) is no code, and an unknown shape gives {@link Evidence#NONE}.
 */
final class ErrorBodies {
    /** Larger bodies are not parsed: an error body is small. */
    static final int MAX_BODY_CHARS = 256 * 1024;

    /** What a body says: the provider's code, a gRPC status, its message, extra attributes. */
    record Evidence(String code, Integer grpcStatus, String message, Map<String, String> attributes) {
        static final Evidence NONE = new Evidence("", null, "", Map.of());

        boolean isEmpty() {
            return code.isEmpty() && grpcStatus == null && message.isEmpty() && attributes.isEmpty();
        }
    }

    private ErrorBodies() {}

    /** The evidence of {@code body} (JSON text) with the AWS error-type header, if any. */
    static Evidence read(String body, String awsErrorType, Integer status) {
        Map<String, Object> data = object(body != null && body.length() <= MAX_BODY_CHARS ? Json.parse(body) : null);
        String aws = awsType(awsErrorType, data);
        if (!aws.isEmpty()) {
            String message = text(data.get("message"));
            return new Evidence(aws, null, message.isEmpty() ? text(data.get("Message")) : message, Map.of());
        }
        Map<String, Object> error = object(data.get("error"));
        if (error.isEmpty()) {
            return Evidence.NONE;
        }
        String message = text(error.get("message"));
        if ("error".equals(data.get("type")) && error.get("type") instanceof String type) {
            Map<String, Object> details = object(error.get("details"));
            String detail = text(details.get("error_code"));
            return new Evidence(type.strip(), null, message, detail.isEmpty() ? Map.of() : Map.of("error_code", detail));
        }
        if (error.get("status") instanceof String google) {
            int number = Facts.GRPC_CODE_NAMES.indexOf(google);
            if (number >= 0) {
                return new Evidence(google, number, message, Map.of());
            }
        }
        return new Evidence(notTheStatus(error.get("code"), status), null, message, Map.of());
    }

    private static String awsType(String header, Map<String, Object> body) {
        String value = header;
        if (value == null || value.isBlank()) {
            value = body.get("__type") instanceof String t ? t : null;
        }
        if (value == null) {
            return "";
        }
        String head = value.split(":", 2)[0];
        return head.substring(head.lastIndexOf('#') + 1).strip();
    }

    private static String notTheStatus(Object code, Integer status) {
        String text;
        if (code instanceof Long n) {
            text = Long.toString(n);
        } else if (code instanceof Double d && d == Math.rint(d)) {
            text = Long.toString(d.longValue());
        } else {
            text = text(code);
        }
        return status != null && text.equals(Integer.toString(status)) ? "" : text;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object value) {
        return value instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
    }

    private static String text(Object value) {
        return value instanceof String s ? s.strip() : "";
    }
}
