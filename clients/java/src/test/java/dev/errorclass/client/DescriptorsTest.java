package dev.errorclass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.errorclass.v1.ExceptionDescriptor;
import dev.errorclass.v1.Origin;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class DescriptorsTest {

    @Test
    void typeSupertypesAndOrigin() {
        ExceptionDescriptor d = Descriptors.from(new SocketTimeoutException("Read timed out"), Origin.ORIGIN_PROVIDER, " OpenAI ");
        assertEquals("java.net.SocketTimeoutException", d.getType());
        assertEquals(List.of("java.io.InterruptedIOException", "java.io.IOException", "java.lang.Exception", "java.lang.Throwable"),
                d.getSupertypesList());
        assertEquals(Origin.ORIGIN_PROVIDER, d.getOrigin());
        assertEquals("openai", d.getProvider());
        assertEquals("java", d.getLanguage());
        assertEquals("Read timed out", d.getMessage());
        assertFalse(d.hasHttpStatus());
    }

    @Test
    void causesOutermostFirstWithACycleGuard() {
        IOException inner = new IOException("inner");
        RuntimeException middle = new RuntimeException("middle", inner);
        inner.initCause(middle); // a cycle: inner -> middle -> inner
        CompletionException outer = new CompletionException(middle);
        ExceptionDescriptor d = Descriptors.from(outer, Origin.ORIGIN_RUNTIME, "");
        assertEquals(2, d.getCausesCount());
        assertEquals("java.lang.RuntimeException", d.getCauses(0).getType());
        assertEquals("java.io.IOException", d.getCauses(1).getType());
        assertEquals(List.of("java.lang.Exception", "java.lang.Throwable"), d.getCauses(1).getSupertypesList());
    }

    @Test
    void suppressedExceptionsAreNotCauses() {
        IllegalStateException primary = new IllegalStateException("the call failed");
        primary.addSuppressed(new SocketTimeoutException("close() timed out"));
        ExceptionDescriptor d = Descriptors.from(primary, Origin.ORIGIN_PROVIDER, "openai");
        assertEquals(0, d.getCausesCount());
    }

    @Test
    void limitsCutTheMessageCausesAndCode() {
        Throwable t = new RuntimeException("m".repeat(Facts.MAX_MESSAGE_CHARS + 10));
        for (int i = 0; i < Facts.MAX_CAUSES + 5; i++) {
            t = new RuntimeException("level " + i, t);
        }
        ExceptionDescriptor d = Descriptors.from(t, Origin.ORIGIN_UNSPECIFIED, "p".repeat(500));
        assertEquals(Facts.MAX_CAUSES, d.getCausesCount());
        assertEquals(Facts.MAX_LABEL_CHARS, d.getProvider().length());
        ExceptionDescriptor deep = Descriptors.from(new RuntimeException("m".repeat(Facts.MAX_MESSAGE_CHARS + 10)), Origin.ORIGIN_UNSPECIFIED, "");
        assertEquals(Facts.MAX_MESSAGE_CHARS, deep.getMessage().length());
    }

    @Test
    void limitsCountCodePointsAndStripTheSpecsWhitespace() {
        String emoji = "\uD83D\uDE00"; // one character, two UTF-16 units
        ExceptionDescriptor d = Descriptors.from(new RuntimeException(emoji.repeat(Facts.MAX_MESSAGE_CHARS + 1)),
                Origin.ORIGIN_PROVIDER, "\u00a0OpenAI\u0085");
        assertEquals(Facts.MAX_MESSAGE_CHARS, d.getMessage().codePointCount(0, d.getMessage().length()));
        assertEquals(2 * Facts.MAX_MESSAGE_CHARS, d.getMessage().length(), "a cut never splits a surrogate pair");
        assertEquals("openai", d.getProvider(), "U+00A0 and U+0085 are whitespace to the service (String.strip keeps them)");
        ExceptionDescriptor lone = Descriptors.from(new RuntimeException("bad \uD800 text"), Origin.ORIGIN_PROVIDER, "");
        assertEquals("bad \uFFFD text", lone.getMessage());
    }

    @Test
    void validateNamesEveryRefusedFieldAsTheServiceDoes() {
        ExceptionDescriptor bad = ExceptionDescriptor.newBuilder().setType(" ").setHttpStatus(42)
                .addCauses(dev.errorclass.v1.Cause.newBuilder().setType("ok")).addCauses(dev.errorclass.v1.Cause.newBuilder().setType("\u3000"))
                .build();
        InvalidDescriptorException e = org.junit.jupiter.api.Assertions.assertThrows(InvalidDescriptorException.class,
                () -> Descriptors.validate(bad));
        assertEquals(List.of("descriptor.type", "descriptor.causes[1].type", "descriptor.http_status"),
                e.violations().stream().map(InvalidDescriptorException.FieldViolation::field).toList());
        assertEquals("python", Descriptors.validate(ExceptionDescriptor.newBuilder().setType("T").setLanguage(" Python ").build()).getLanguage());
    }

    @Test
    void runtimeFactsRefuseAValueOutsideTheContractNamingTheFact() {
        RuntimeFacts.InvalidFactException e = org.junit.jupiter.api.Assertions.assertThrows(RuntimeFacts.InvalidFactException.class,
                () -> RuntimeFacts.of(java.util.Map.of("stage", "link")));
        assertEquals("stage", e.fact());
        assertEquals("legal-hold", RuntimeFacts.veto(" Legal-Hold ").attributes().get(Veto.FACT));
        assertEquals("run", RuntimeFacts.runTimeLimit().and(RuntimeFacts.reconciled(3)).attributes().get(TimeLimit.FACT));
        org.junit.jupiter.api.Assertions.assertThrows(RuntimeFacts.InvalidFactException.class, () -> RuntimeFacts.reconciled(-1));
    }

    /** A raw java.net.http call to a loopback server answering 400 with a body of no envelope. */
    @Test
    void anHttpErrorResponseWithABareBody() throws Exception {
        com.sun.net.httpserver.HttpServer http = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        byte[] body = "{\"code\": \"invalid_prompt\", \"message\": \"Invalid prompt: flagged.\", \"type\": \"invalid_request_error\"}"
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        http.createContext("/", exchange -> {
            exchange.sendResponseHeaders(400, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        http.start();
        try {
            HttpClient client = HttpClient.newBuilder().proxy(HttpClient.Builder.NO_PROXY).build();
            HttpResponse<String> response = client.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.getAddress().getPort() + "/v1/responses")).build(),
                    HttpResponse.BodyHandlers.ofString());
            ExceptionDescriptor d = Descriptors.fromHttpResponse(response, response.body(), Origin.ORIGIN_PROVIDER, "OpenAI");
            assertEquals(400, d.getHttpStatus());
            assertEquals("invalid_prompt", d.getCode());
            assertEquals("400\nInvalid prompt: flagged.", d.getMessage());
            assertEquals("openai", d.getProvider());
            assertEquals("java", d.getLanguage());
        } finally {
            http.stop(0);
        }
    }

    /** An SDK-shaped exception, read by reflection as openai-java's OpenAIServiceException is. */
    public static class ServiceException extends RuntimeException {
        public ServiceException(String message) {
            super(message);
        }

        public int statusCode() {
            return 429;
        }

        public java.util.Optional<String> code() {
            return java.util.Optional.of("insufficient_quota");
        }
    }

    @Test
    void statusAndCodeByReflection() {
        ExceptionDescriptor d = Descriptors.from(new ServiceException("429: quota"), Origin.ORIGIN_PROVIDER, "openai");
        assertEquals(429, d.getHttpStatus());
        assertEquals("insufficient_quota", d.getCode());
    }

    @Test
    void aMessageThatIsAnErrorBodyIsRead() {
        String body = "{\"type\": \"error\", \"error\": {\"type\": \"rate_limit_error\", \"message\": \"spent\","
                + " \"details\": {\"error_code\": \"contract_spend_limit_reached\"}}}";
        ExceptionDescriptor d = Descriptors.from(new RuntimeException(body), Origin.ORIGIN_PROVIDER, "anthropic");
        assertEquals("rate_limit_error", d.getCode());
        assertEquals("contract_spend_limit_reached", d.getAttributesOrThrow("error_code"));
    }

    @Test
    void runtimeFactsBecomeTheContractAttributes() {
        ExceptionDescriptor d = Descriptors.from(new java.util.concurrent.TimeoutException(), Origin.ORIGIN_TOOL, "",
                RuntimeFacts.toolTimeLimit());
        assertEquals("tool", d.getAttributesOrThrow("time_limit"));
        assertEquals("budget", Descriptors.from(new RuntimeException(), Origin.ORIGIN_INTERCEPTOR, "",
                RuntimeFacts.veto(Veto.BUDGET)).getAttributesOrThrow("veto"));
        assertEquals("0", RuntimeFacts.reconciled(0).attributes().get("provider_calls"));
        assertEquals("compile", RuntimeFacts.stage(Stage.COMPILE).attributes().get("stage"));
    }

    @Test
    void finishReasons() {
        ExceptionDescriptor d = Descriptors.fromFinishReason("content_filter", "azure", false, "gpt-4o");
        assertEquals(Facts.FINISH_REASON_TYPE, d.getType());
        assertEquals("content_filter", d.getCode());
        assertEquals("gpt-4o", d.getAttributesOrThrow("model"));
        assertNull(Descriptors.fromFinishReason("length", "openai", false, ""));
        assertNull(Descriptors.fromFinishReason("stop", "openai", false, ""));
        assertEquals(Facts.PROMPT_BLOCKED_TYPE, Descriptors.fromFinishReason("SAFETY", "gemini", true, "").getType());
    }

    @Test
    void aRealHttpTimeout() throws Exception {
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Thread holder = new Thread(() -> {
                try (java.net.Socket held = silent.accept()) {
                    held.getInputStream().read(new byte[1 << 16]); // read the request, never answer
                    Thread.sleep(5_000);
                } catch (IOException | InterruptedException e) {
                    // the test is over
                }
            });
            holder.setDaemon(true);
            holder.start();
            HttpClient client = HttpClient.newBuilder().proxy(HttpClient.Builder.NO_PROXY).build();
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + silent.getLocalPort() + "/"))
                    .timeout(Duration.ofSeconds(1)).build();
            try {
                client.send(request, HttpResponse.BodyHandlers.ofString());
                throw new AssertionError("the silent server answered");
            } catch (HttpTimeoutException e) {
                ExceptionDescriptor d = Descriptors.from(e, Origin.ORIGIN_PROVIDER, "openai");
                assertEquals("java.net.http.HttpTimeoutException", d.getType());
                assertTrue(d.getSupertypesList().contains("java.io.IOException"));
            } finally {
                holder.interrupt();
            }
        }
    }
}
