package dev.errorclass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.errorclass.v1.ExceptionDescriptor;
import dev.errorclass.v1.Origin;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.http.SdkHttpResponse;
import software.amazon.awssdk.services.bedrockruntime.model.ThrottlingException;

/**
 * The evidence a descriptor keeps from the real SDKs' exceptions (test-scope dependencies at
 * the conformance suite's versions, built as the SDKs build them): the retry and rate-limit
 * headers of openai-java, anthropic-java and AWS SDK v2 errors, and stream errors (the SDKs'
 * SseException, an AWS event stream's exception event) read as clients/spec's stream_error.
 */
class SdkEvidenceTest {
    private static final String H = Facts.HEADER_ATTRIBUTE_PREFIX;

    @Test
    void openaiJavaRateLimitKeepsItsRetryHeaders() {
        var headers = com.openai.core.http.Headers.builder().put("Retry-After", "20").put("x-ratelimit-reset-requests", "6m0s")
                .put("x-ratelimit-reset-tokens", " 1s ").put("x-request-id", "req_123").build();
        var error = com.openai.errors.RateLimitException.builder().headers(headers)
                .error(com.openai.models.ErrorObject.builder().message("Rate limit reached for gpt-4o").type("requests")
                        .code("rate_limit_exceeded").param((String) null).build())
                .build();
        ExceptionDescriptor d = Descriptors.from(error, Origin.ORIGIN_PROVIDER, "openai");
        assertEquals(429, d.getHttpStatus());
        assertEquals("rate_limit_exceeded", d.getCode());
        assertEquals(Map.of(H + "retry-after", "20", H + "x-ratelimit-reset-requests", "6m0s", H + "x-ratelimit-reset-tokens", "1s"),
                d.getAttributesMap());
    }

    @Test
    void anthropicJavaKeepsItsResetHeadersAndBodyDetail() {
        var headers = com.anthropic.core.http.Headers.builder().put("retry-after", "17")
                .put("anthropic-ratelimit-requests-reset", "2026-12-03T15:00:17Z").put("request-id", "req_1").build();
        var body = com.anthropic.core.JsonValue.from(Map.of("type", "error", "error", Map.of("type", "rate_limit_error",
                "message", "spent", "details", Map.of("error_code", "contract_spend_limit_reached"))));
        var error = com.anthropic.errors.RateLimitException.builder().headers(headers).body(body).build();
        ExceptionDescriptor d = Descriptors.from(error, Origin.ORIGIN_PROVIDER, "anthropic");
        assertEquals(429, d.getHttpStatus());
        assertEquals("rate_limit_error", d.getCode());
        assertEquals(Map.of(H + "retry-after", "17", H + "anthropic-ratelimit-requests-reset", "2026-12-03T15:00:17Z",
                "error_code", "contract_spend_limit_reached"), d.getAttributesMap());
    }

    @Test
    void sdkStreamErrorsAreReadAsStreamErrorsWithoutTheStreamsStatus() {
        var openai = com.openai.errors.SseException.builder().statusCode(200)
                .headers(com.openai.core.http.Headers.builder().put("date", "Thu, 03 Dec 2026 15:00:00 GMT").build())
                .error(com.openai.models.ErrorObject.builder().message("The server had an error while processing your request.")
                        .type("server_error").code((String) null).param((String) null).build())
                .build();
        ExceptionDescriptor o = Descriptors.from(openai, Origin.ORIGIN_PROVIDER, "openai");
        assertFalse(o.hasHttpStatus(), "the stream's 200 is not the error's status");
        assertEquals("", o.getCode());
        assertEquals(Map.of(), o.getAttributesMap(), "a 200's headers are not the error's");

        var body = com.anthropic.core.JsonValue.from(Map.of("type", "error", "error", Map.of("type", "overloaded_error", "message", "Overloaded")));
        var anthropic = com.anthropic.errors.SseException.builder().statusCode(200)
                .headers(com.anthropic.core.http.Headers.builder().build()).body(body).build();
        ExceptionDescriptor a = Descriptors.from(anthropic, Origin.ORIGIN_PROVIDER, "anthropic");
        assertFalse(a.hasHttpStatus());
        assertEquals("overloaded_error", a.getCode());
    }

    @Test
    void awsEventStreamExceptionsGetTheNonStreamCode() {
        SdkHttpResponse event = SdkHttpResponse.builder().putHeader(":message-type", "exception")
                .putHeader(":exception-type", "throttlingException").build();
        var stream = ThrottlingException.builder().message("Too many tokens, please wait before trying again.")
                .awsErrorDetails(AwsErrorDetails.builder().errorCode("throttlingException").serviceName("BedrockRuntime")
                        .sdkHttpResponse(event).build())
                .build();
        ExceptionDescriptor s = Descriptors.from(stream, Origin.ORIGIN_PROVIDER, "bedrock");
        assertEquals("ThrottlingException", s.getCode());
        assertFalse(s.hasHttpStatus());

        SdkHttpResponse response = SdkHttpResponse.builder().statusCode(429)
                .putHeader("x-amzn-ErrorType", "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/")
                .putHeader("Retry-After", "3").putHeader("x-amzn-RequestId", "r1").build();
        var plain = ThrottlingException.builder().message("Too many requests").statusCode(429)
                .awsErrorDetails(AwsErrorDetails.builder().errorCode("ThrottlingException").sdkHttpResponse(response).build()).build();
        ExceptionDescriptor p = Descriptors.from(plain, Origin.ORIGIN_PROVIDER, "bedrock");
        assertEquals(429, p.getHttpStatus());
        assertEquals("ThrottlingException", p.getCode());
        assertEquals(Map.of(H + "retry-after", "3"), p.getAttributesMap());
    }

    /** A raw java.net.http call to a loopback server answering Gemini's 429 with Retry-After and RetryInfo. */
    @Test
    void anHttpResponseKeepsItsHeadersAndGoogleDetails() throws Exception {
        com.sun.net.httpserver.HttpServer http = com.sun.net.httpserver.HttpServer.create(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        byte[] body = ("{\"error\": {\"code\": 429, \"message\": \"Resource exhausted.\", \"status\": \"RESOURCE_EXHAUSTED\","
                + " \"details\": [{\"@type\": \"type.googleapis.com/google.rpc.RetryInfo\", \"retryDelay\": \"7s\"}]}}")
                .getBytes(StandardCharsets.UTF_8);
        http.createContext("/", exchange -> {
            exchange.getResponseHeaders().add("Retry-After", "7");
            exchange.getResponseHeaders().add("X-Other", "dropped");
            exchange.sendResponseHeaders(429, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        http.start();
        try {
            HttpClient client = HttpClient.newBuilder().proxy(HttpClient.Builder.NO_PROXY).build();
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + http.getAddress().getPort() + "/v1beta/models/gemini:generateContent")).build(),
                    HttpResponse.BodyHandlers.ofString());
            ExceptionDescriptor d = Descriptors.fromHttpResponse(response, response.body(), Origin.ORIGIN_PROVIDER, "gemini");
            assertEquals("RESOURCE_EXHAUSTED", d.getCode());
            assertEquals(8, d.getGrpcStatus());
            assertEquals(Map.of(H + "retry-after", "7", "google.rpc.retry_info.retry_delay", "7s",
                    H + "date", response.headers().firstValue("date").orElseThrow()), d.getAttributesMap(), "the server's clock, and no other header");
        } finally {
            http.stop(0);
        }
    }

    @Test
    void theRuntimesOwnGuardIsAFact() {
        ExceptionDescriptor d = Descriptors.from(new IllegalStateException("concurrency cap reached"), Origin.ORIGIN_RUNTIME, "openai",
                RuntimeFacts.refusedBy(RefusedBy.CONCURRENCY_LIMIT));
        assertEquals("concurrency_limit", d.getAttributesOrThrow(RefusedBy.FACT));
        assertEquals(List.of("breaker", "rate_limiter", "concurrency_limit", "quota", "budget"),
                java.util.Arrays.stream(RefusedBy.values()).map(RefusedBy::value).toList());
        assertNull(RuntimeFacts.NONE.attributes().get(RefusedBy.FACT));
    }
}
