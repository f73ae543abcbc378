package dev.errorclass.conformance;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.openai.azure.AzureOpenAIServiceVersion;
import com.openai.azure.AzureUrlPathMode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.azure.credential.AzureApiKeyCredential;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.langchain4j.model.anthropic.AnthropicChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.openai.OpenAiChatOptions;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.bedrockruntime.BedrockRuntimeClient;
import software.amazon.awssdk.services.bedrockruntime.model.ContentBlock;
import software.amazon.awssdk.services.bedrockruntime.model.ConversationRole;
import software.amazon.awssdk.services.bedrockruntime.model.ConverseResponse;

/**
 * One driver per Java SDK: each makes ONE real call (retries off, 1 s timeouts, as the Python
 * and Node drivers) against the fake provider's base URL for the scenario.
 */
final class Drivers {
    static final Duration TIMEOUT = Duration.ofSeconds(1);
    static final String OPENAI_MODEL = "gpt-4o-mini";
    static final String AZURE_DEPLOYMENT = "gpt-4o";
    static final String AZURE_API_VERSION = "2024-10-21";
    static final String ANTHROPIC_MODEL = "claude-sonnet-4-5";
    static final String ANTHROPIC_VERSION = "2023-06-01";
    static final String GEMINI_MODEL = "gemini-2.5-flash";
    static final String BEDROCK_MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0";
    static final String PROMPT = "Say hello.";

    private Drivers() {}

    static void register(Map<String, Worker.Entry> drivers) {
        drivers.put("java.openai", new Worker.Entry(List.of("openai", "azure"), Drivers::openai));
        drivers.put("java.anthropic", new Worker.Entry(List.of("anthropic"), Drivers::anthropic));
        drivers.put("java.langchain4j-openai", new Worker.Entry(List.of("openai"), Drivers::langchain4jOpenai));
        drivers.put("java.langchain4j-anthropic", new Worker.Entry(List.of("anthropic"), Drivers::langchain4jAnthropic));
        drivers.put("java.spring-ai-openai", new Worker.Entry(List.of("openai"), Drivers::springAiOpenai));
        drivers.put("java.bedrock", new Worker.Entry(List.of("bedrock"), Drivers::bedrock));
        drivers.put("java.http", new Worker.Entry(List.of("openai", "azure", "anthropic", "gemini"), Drivers::jdkHttp));
        drivers.put("java.okhttp", new Worker.Entry(List.of("openai", "azure", "anthropic", "gemini"), Drivers::okhttp));
        drivers.put("java.resilience4j", new Worker.Entry(List.of("openai"), Drivers::resilience4j));
    }

    // --- openai-java ------------------------------------------------------------------------

    static OpenAIClient openaiClient(Worker.Call c) {
        OpenAIOkHttpClient.Builder b = OpenAIOkHttpClient.builder().maxRetries(0).timeout(TIMEOUT);
        if (c.api().equals("azure")) {
            b.baseUrl(c.base()).credential(AzureApiKeyCredential.create("azure-test-key"))
                    .azureServiceVersion(AzureOpenAIServiceVersion.fromString(AZURE_API_VERSION))
                    .azureUrlPathMode(AzureUrlPathMode.LEGACY);
        } else {
            b.baseUrl(c.base() + "/v1").apiKey("sk-test");
        }
        return b.build();
    }

    static Object openai(Worker.Call c) {
        OpenAIClient client = openaiClient(c);
        try {
            ChatCompletionCreateParams params = ChatCompletionCreateParams.builder()
                    .model(c.api().equals("azure") ? AZURE_DEPLOYMENT : OPENAI_MODEL)
                    .addUserMessage(PROMPT)
                    .build();
            if (c.stream()) {
                String[] last = {"", ""};
                try (com.openai.core.http.StreamResponse<ChatCompletionChunk> s =
                        client.chat().completions().createStreaming(params)) {
                    s.stream().forEach(chunk -> {
                        last[1] = chunk.model();
                        chunk.choices().forEach(choice -> choice.finishReason().ifPresent(r -> last[0] = r.toString()));
                    });
                }
                return new Worker.Finished(last[0], last[1]);
            }
            ChatCompletion done = client.chat().completions().create(params);
            return new Worker.Finished(done.choices().isEmpty() ? "" : done.choices().get(0).finishReason().toString(), done.model());
        } finally {
            client.close();
        }
    }

    // --- anthropic-sdk-java -----------------------------------------------------------------

    static Object anthropic(Worker.Call c) {
        AnthropicClient client = AnthropicOkHttpClient.builder()
                .baseUrl(c.base()).apiKey("sk-ant-test").maxRetries(0).timeout(TIMEOUT).build();
        try {
            MessageCreateParams params = MessageCreateParams.builder()
                    .model(ANTHROPIC_MODEL).maxTokens(64).addUserMessage(PROMPT).build();
            if (c.stream()) {
                String[] last = {"", ""};
                try (StreamResponse<RawMessageStreamEvent> s = client.messages().createStreaming(params)) {
                    s.stream().forEach(event -> {
                        event.messageStart().ifPresent(m -> last[1] = m.message().model().toString());
                        event.messageDelta().flatMap(m -> m.delta().stopReason()).ifPresent(r -> last[0] = r.toString());
                    });
                }
                return new Worker.Finished(last[0], last[1]);
            }
            Message done = client.messages().create(params);
            return new Worker.Finished(done.stopReason().map(Object::toString).orElse(""), done.model().toString());
        } finally {
            client.close();
        }
    }

    // --- LangChain4j --------------------------------------------------------------------------

    static Object langchain4jOpenai(Worker.Call c) {
        return OpenAiChatModel.builder()
                .baseUrl(c.base() + "/v1").apiKey("sk-test").modelName(OPENAI_MODEL)
                .timeout(TIMEOUT).maxRetries(0).build()
                .chat(PROMPT);
    }

    static Object langchain4jAnthropic(Worker.Call c) {
        return AnthropicChatModel.builder()
                .baseUrl(c.base() + "/v1/").apiKey("sk-ant-test").modelName(ANTHROPIC_MODEL).maxTokens(64)
                .timeout(TIMEOUT).maxRetries(0).build()
                .chat(PROMPT);
    }

    // --- Spring AI ----------------------------------------------------------------------------

    static Object springAiOpenai(Worker.Call c) {
        OpenAiChatOptions options = OpenAiChatOptions.builder()
                .baseUrl(c.base() + "/v1").apiKey("sk-test").model(OPENAI_MODEL)
                .timeout(TIMEOUT).maxRetries(0).build();
        return org.springframework.ai.openai.OpenAiChatModel.builder().options(options).build()
                .call(new Prompt(PROMPT));
    }

    // --- AWS SDK v2 Bedrock Runtime -----------------------------------------------------------

    static Object bedrock(Worker.Call c) {
        try (BedrockRuntimeClient client = BedrockRuntimeClient.builder()
                .endpointOverride(URI.create(c.base()))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(
                        AwsBasicCredentials.create("AKIATESTTESTTESTTEST", "test-secret-key")))
                .httpClient(ApacheHttpClient.builder().connectionTimeout(TIMEOUT).socketTimeout(TIMEOUT).build())
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry()))
                .build()) {
            String model = c.hint("model", BEDROCK_MODEL);
            if (c.hint("operation", "converse").equals("invoke_model")) {
                String body = model.startsWith("amazon.titan")
                        ? "{\"inputText\": \"" + PROMPT + "\"}"
                        : "{\"anthropic_version\": \"bedrock-2023-05-31\", \"max_tokens\": 64, \"messages\": [{\"role\": \"user\", \"content\": \"" + PROMPT + "\"}]}";
                return client.invokeModel(r -> r.modelId(model).contentType("application/json")
                        .body(SdkBytes.fromString(body, StandardCharsets.UTF_8)));
            }
            ConverseResponse done = client.converse(r -> r.modelId(model).messages(
                    software.amazon.awssdk.services.bedrockruntime.model.Message.builder()
                            .role(ConversationRole.USER).content(ContentBlock.fromText(PROMPT)).build()));
            return new Worker.Finished(done.stopReasonAsString(), model);
        }
    }

    // --- raw HTTP clients ---------------------------------------------------------------------

    /** Each API's request as a hand-rolled client sends it (tests/conformance/apis.py). */
    record Raw(String url, Map<String, String> headers, String body) {}

    static Raw raw(Worker.Call c) {
        String msg = "[{\"role\": \"user\", \"content\": \"" + PROMPT + "\"}]";
        String stream = c.stream() ? ", \"stream\": true" : "";
        return switch (c.api()) {
            case "openai" -> new Raw(c.base() + "/v1/chat/completions", Map.of("authorization", "Bearer sk-test"),
                    "{\"model\": \"" + OPENAI_MODEL + "\", \"messages\": " + msg + stream + "}");
            case "azure" -> new Raw(c.base() + "/openai/deployments/" + AZURE_DEPLOYMENT + "/chat/completions?api-version=" + AZURE_API_VERSION,
                    Map.of("api-key", "azure-test-key"), "{\"messages\": " + msg + stream + "}");
            case "anthropic" -> new Raw(c.base() + "/v1/messages",
                    Map.of("x-api-key", "sk-ant-test", "anthropic-version", ANTHROPIC_VERSION),
                    "{\"model\": \"" + ANTHROPIC_MODEL + "\", \"max_tokens\": 64, \"messages\": " + msg + stream + "}");
            case "gemini" -> new Raw(c.base() + "/v1beta/models/" + c.hint("model", GEMINI_MODEL)
                    + (c.stream() ? ":streamGenerateContent?alt=sse" : ":generateContent"),
                    Map.of("x-goog-api-key", "gemini-test-key"),
                    "{\"contents\": [{\"role\": \"user\", \"parts\": [{\"text\": \"" + PROMPT + "\"}]}]}");
            default -> throw new IllegalArgumentException("no raw request for api " + c.api());
        };
    }

    static Object jdkHttp(Worker.Call c) throws IOException, InterruptedException {
        Raw r = raw(c);
        HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).proxy(HttpClient.Builder.NO_PROXY).build();
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(r.url())).timeout(TIMEOUT)
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(r.body()));
        r.headers().forEach(b::header);
        HttpResponse<String> response = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
        return new Worker.HttpAnswer(response, response.body());
    }

    static Object okhttp(Worker.Call c) throws IOException {
        Raw r = raw(c);
        OkHttpClient client = new OkHttpClient.Builder()
                .connectTimeout(TIMEOUT).readTimeout(TIMEOUT).retryOnConnectionFailure(false)
                .proxy(java.net.Proxy.NO_PROXY).build();
        Request.Builder b = new Request.Builder().url(r.url())
                .post(RequestBody.create(r.body(), MediaType.get("application/json")));
        r.headers().forEach(b::header);
        try (Response response = client.newCall(b.build()).execute()) {
            String body = response.body() == null ? "" : response.body().string();
            return new Worker.HttpAnswer(response, body);
        } finally {
            client.dispatcher().executorService().shutdown();
            client.connectionPool().evictAll();
        }
    }

    // --- resilience4j around a call -----------------------------------------------------------

    /** openai-java's call through a CircuitBreaker and a TimeLimiter (1 s), as a runtime wraps it. */
    static Object resilience4j(Worker.Call c) throws Exception {
        CircuitBreaker breaker = CircuitBreaker.ofDefaults("provider");
        TimeLimiter limiter = TimeLimiter.of(TimeLimiterConfig.custom().timeoutDuration(TIMEOUT).cancelRunningFuture(true).build());
        OpenAIClient client = OpenAIOkHttpClient.builder().baseUrl(c.base() + "/v1").apiKey("sk-test")
                .maxRetries(0).timeout(Duration.ofSeconds(5)).build();
        try {
            ChatCompletionCreateParams params = ChatCompletionCreateParams.builder()
                    .model(OPENAI_MODEL).addUserMessage(PROMPT).build();
            return breaker.executeCallable(() -> limiter.executeFutureSupplier(
                    () -> CompletableFuture.supplyAsync(() -> client.chat().completions().create(params))));
        } finally {
            client.close();
        }
    }
}
