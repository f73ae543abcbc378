package dev.errorclass.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import dev.errorclass.client.Descriptors;
import dev.errorclass.client.RefusedBy;
import dev.errorclass.client.RuntimeFacts;
import dev.errorclass.client.Stage;
import dev.errorclass.client.Veto;
import dev.errorclass.v1.Origin;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The runtime suite's Java worker (tests/conformance/runtime/README.md's protocol): each pair
 * raises the real failure with real JDK (or resilience4j) code and describes it with
 * {@link Descriptors#from}, with the origin the runtime gives and, when the request says
 * {@code contract: true}, the {@link RuntimeFacts} only the runtime knows.
 */
public final class RuntimePairs {
    /** A pair's failure, where it was raised, and what the runtime knows about it. */
    record Raised(Throwable error, Origin origin, RuntimeFacts facts) {}

    record Env(String toolApi, int closedPort, Path tmp) {}

    interface Pair {
        Raised raise(Env env) throws Exception;
    }

    static final Duration SHORT = Duration.ofMillis(200);
    static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "runtime-pair");
        t.setDaemon(true);
        return t;
    });

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
        if (List.of(args).contains("--list")) {
            RuntimeList.main(args);
            return;
        }
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode request = Worker.JSON.readTree(line);
            String pair = request.path("pair").asText();
            ObjectNode answer = Worker.JSON.createObjectNode();
            answer.put("pair", pair);
            try {
                JsonNode e = request.path("env");
                Env env = new Env(e.path("tool_api").asText(), e.path("closed_port").asInt(), Path.of(e.path("tmp").asText()));
                Raised r = pair(pair).raise(env);
                if (r.error() == null) {
                    throw new IllegalStateException("the pair raised nothing");
                }
                RuntimeFacts facts = request.path("contract").asBoolean(true) ? r.facts() : RuntimeFacts.NONE;
                answer.set("descriptor", Worker.descriptorJson(Descriptors.from(r.error(), r.origin(), "", facts)));
                answer.set("chain", Worker.chain(r.error()));
                answer.putNull("error");
            } catch (Exception | AssertionError ex) {
                answer.putNull("descriptor");
                answer.set("chain", Worker.chain(ex));
                answer.put("error", ex.toString());
            }
            out.println(Worker.JSON.writeValueAsString(answer));
        }
        POOL.shutdownNow();
    }

    /** What `body` threw (the failure under test); an AssertionError when it threw nothing. */
    interface Body {
        void run() throws Exception;
    }

    static Throwable caught(Body body) {
        try {
            body.run();
        } catch (Throwable t) {
            return t;
        }
        throw new AssertionError("expected a failure, the call returned");
    }

    static Future<String> sleeper(long millis) {
        return POOL.submit(() -> {
            Thread.sleep(millis);
            return "late";
        });
    }

    static HttpClient http() {
        return HttpClient.newBuilder().proxy(HttpClient.Builder.NO_PROXY).connectTimeout(Duration.ofSeconds(2)).build();
    }

    static HttpRequest get(String url, Duration timeout) {
        return HttpRequest.newBuilder(URI.create(url)).timeout(timeout).GET().build();
    }

    static Pair pair(String id) {
        return switch (id) {
            // A tool wrapper's own limit: the wrapper says so (time_limit tool).
            case "java.future-get-timeout::tool-timeout.wrapper-limit" -> env -> new Raised(
                    caught(() -> sleeper(5_000).get(SHORT.toMillis(), TimeUnit.MILLISECONDS)),
                    Origin.ORIGIN_TOOL, RuntimeFacts.toolTimeLimit());
            case "java.completable-or-timeout::tool-timeout.wrapper-limit" -> env -> new Raised(
                    caught(() -> CompletableFuture.supplyAsync(() -> sleep(5_000), POOL)
                            .orTimeout(SHORT.toMillis(), TimeUnit.MILLISECONDS).join()),
                    Origin.ORIGIN_TOOL, RuntimeFacts.toolTimeLimit());
            case "java.resilience4j-timelimiter::tool-timeout.wrapper-limit" -> env -> {
                TimeLimiter limiter = TimeLimiter.of(TimeLimiterConfig.custom().timeoutDuration(SHORT).build());
                return new Raised(caught(() -> limiter.executeFutureSupplier(() -> sleeper(5_000))),
                        Origin.ORIGIN_TOOL, RuntimeFacts.toolTimeLimit());
            };
            // The run's own deadline.
            case "java.future-get-timeout::timeout.run-deadline" -> env -> new Raised(
                    caught(() -> sleeper(5_000).get(SHORT.toMillis(), TimeUnit.MILLISECONDS)),
                    Origin.ORIGIN_RUNTIME, RuntimeFacts.runTimeLimit());
            case "java.completable-or-timeout::timeout.run-deadline" -> env -> new Raised(
                    caught(() -> CompletableFuture.supplyAsync(() -> sleep(5_000), POOL)
                            .orTimeout(SHORT.toMillis(), TimeUnit.MILLISECONDS).join()),
                    Origin.ORIGIN_RUNTIME, RuntimeFacts.runTimeLimit());
            // The run's deadline cancelling a provider call in flight (a provider API on loopback
            // that answers only after 3 s): the runtime's Future.get(timeout) fires and it cancels
            // the call's task (an interrupt); what the call raised on that cancel is described,
            // with the call's origin, and the runtime knows its deadline fired.
            case "java.http-send-interrupted-run-deadline::timeout.run-deadline" -> env -> new Raised(
                    underRunDeadline(() -> http().send(get(env.toolApi() + "/slow/3000", Duration.ofSeconds(10)),
                            HttpResponse.BodyHandlers.ofString())),
                    Origin.ORIGIN_PROVIDER, RuntimeFacts.runTimeLimit());
            case "java.openai-interrupted-run-deadline::timeout.run-deadline" -> env -> {
                OpenAIClient client = OpenAIOkHttpClient.builder().baseUrl(env.toolApi() + "/slow/3000/v1")
                        .apiKey("sk-test").maxRetries(0).timeout(Duration.ofSeconds(10)).build();
                try {
                    return new Raised(underRunDeadline(() -> client.chat().completions().create(ChatCompletionCreateParams.builder()
                            .model("gpt-4o-mini").addUserMessage("hi").build())),
                            Origin.ORIGIN_PROVIDER, RuntimeFacts.runTimeLimit());
                } finally {
                    client.close();
                }
            };
            case "java.send-async-cancel-run-deadline::timeout.run-deadline" -> env -> {
                CompletableFuture<HttpResponse<String>> call = http().sendAsync(
                        get(env.toolApi() + "/slow/3000", Duration.ofSeconds(10)), HttpResponse.BodyHandlers.ofString());
                Throwable deadline = caught(() -> call.get(SHORT.toMillis(), TimeUnit.MILLISECONDS));
                if (!(deadline instanceof TimeoutException)) {
                    throw new AssertionError("the run's deadline did not fire: " + deadline);
                }
                call.cancel(true); // the runtime cancels the exchange
                return new Raised(caught(call::join), Origin.ORIGIN_PROVIDER, RuntimeFacts.runTimeLimit());
            };
            // A tool's own HTTP client timing out (the wrapper's limit did not fire).
            case "java.http-timeout::tool-error.own-timeout" -> env -> new Raised(
                    caught(() -> http().send(get(env.toolApi() + "/slow/3000", SHORT), HttpResponse.BodyHandlers.ofString())),
                    Origin.ORIGIN_TOOL, RuntimeFacts.NONE);
            case "java.http-timeout-in-future::tool-error.own-timeout" -> env -> new Raised(
                    caught(() -> POOL.submit(() -> http().send(get(env.toolApi() + "/slow/3000", SHORT),
                            HttpResponse.BodyHandlers.ofString())).get(5, TimeUnit.SECONDS)),
                    Origin.ORIGIN_TOOL, RuntimeFacts.NONE);
            // The provider call's own client timeout.
            case "java.http-timeout::timeout.provider-call" -> env -> new Raised(
                    caught(() -> http().send(get(env.toolApi() + "/slow/3000", SHORT), HttpResponse.BodyHandlers.ofString())),
                    Origin.ORIGIN_PROVIDER, RuntimeFacts.NONE);
            case "java.http-send-async-join::timeout.provider-call" -> env -> new Raised(
                    caught(() -> http().sendAsync(get(env.toolApi() + "/slow/3000", SHORT), HttpResponse.BodyHandlers.ofString()).join()),
                    Origin.ORIGIN_PROVIDER, RuntimeFacts.NONE);
            // A user's cancel.
            case "java.future-cancel::cancel.user" -> env -> {
                Future<String> f = sleeper(5_000);
                f.cancel(true);
                return new Raised(caught(f::get), Origin.ORIGIN_USER, RuntimeFacts.NONE);
            };
            case "java.completable-cancel::cancel.user" -> env -> {
                CompletableFuture<String> f = CompletableFuture.supplyAsync(() -> sleep(5_000), POOL);
                f.cancel(true);
                return new Raised(caught(f::join), Origin.ORIGIN_USER, RuntimeFacts.NONE);
            };
            case "java.thread-interrupt::cancel.user" -> env -> {
                Throwable[] seen = new Throwable[1];
                CountDownLatch started = new CountDownLatch(1);
                Thread run = new Thread(() -> {
                    started.countDown();
                    seen[0] = caught(() -> Thread.sleep(5_000));
                });
                run.start();
                started.await();
                Thread.sleep(50);
                run.interrupt(); // the user's cancel interrupts the run's thread
                run.join(5_000);
                return new Raised(seen[0], Origin.ORIGIN_USER, RuntimeFacts.NONE);
            };
            // Tools failing.
            case "java.files-read::tool-error.file" -> env -> new Raised(
                    caught(() -> Files.readString(env.tmp().resolve("no-such-file.txt"))), Origin.ORIGIN_TOOL, RuntimeFacts.NONE);
            case "java.executor-wrapped-file::tool-error.file" -> env -> new Raised(
                    caught(() -> POOL.submit(() -> Files.readString(env.tmp().resolve("no-such-file.txt"))).get(5, TimeUnit.SECONDS)),
                    Origin.ORIGIN_TOOL, RuntimeFacts.NONE);
            case "java.parse-int::tool-error.parse" -> env -> new Raised(
                    caught(() -> Integer.parseInt("forty-two")), Origin.ORIGIN_TOOL, RuntimeFacts.NONE);
            case "java.completion-wrapped-parse::tool-error.parse" -> env -> new Raised(
                    caught(() -> CompletableFuture.supplyAsync(() -> Integer.parseInt("forty-two"), POOL).join()),
                    Origin.ORIGIN_TOOL, RuntimeFacts.NONE);
            case "java.http-refused::tool-error.refused" -> env -> new Raised(
                    caught(() -> http().send(get("http://127.0.0.1:" + env.closedPort() + "/", Duration.ofSeconds(2)),
                            HttpResponse.BodyHandlers.ofString())),
                    Origin.ORIGIN_TOOL, RuntimeFacts.NONE);
            case "java.http-status::tool-error.http-status" -> env -> {
                // a raw client returns the status; the tool throws, as tools do, with the response
                HttpResponse<String> r = http().send(get(env.toolApi() + "/status/429", Duration.ofSeconds(2)),
                        HttpResponse.BodyHandlers.ofString());
                return new Raised(new java.io.IOException("tool api answered " + r.statusCode() + ": " + r.body()),
                        Origin.ORIGIN_TOOL, RuntimeFacts.NONE);
            };
            // The runtime's own limiters, bulkheads and breakers.
            case "java.resilience4j-ratelimiter::quota.limiter" -> env -> {
                RateLimiter limiter = RateLimiter.of("runtime", RateLimiterConfig.custom().limitForPeriod(1)
                        .limitRefreshPeriod(Duration.ofMinutes(1)).timeoutDuration(Duration.ZERO).build());
                limiter.executeRunnable(() -> { });
                return new Raised(caught(() -> limiter.executeRunnable(() -> { })), Origin.ORIGIN_RUNTIME, RuntimeFacts.NONE);
            };
            case "java.resilience4j-bulkhead::quota.bulkhead" -> env -> {
                Bulkhead bulkhead = Bulkhead.of("runtime", BulkheadConfig.custom().maxConcurrentCalls(1).maxWaitDuration(Duration.ZERO).build());
                CountDownLatch inside = new CountDownLatch(1);
                CountDownLatch release = new CountDownLatch(1);
                POOL.submit(() -> bulkhead.executeCallable(() -> {
                    inside.countDown();
                    return release.await(5, TimeUnit.SECONDS);
                }));
                inside.await(5, TimeUnit.SECONDS);
                Throwable t = caught(() -> bulkhead.executeRunnable(() -> { }));
                release.countDown();
                return new Raised(t, Origin.ORIGIN_RUNTIME, RuntimeFacts.NONE);
            };
            case "java.resilience4j-circuitbreaker::breaker.open" -> env -> {
                CircuitBreaker breaker = CircuitBreaker.of("provider", CircuitBreakerConfig.custom()
                        .slidingWindowSize(2).minimumNumberOfCalls(2).failureRateThreshold(50).build());
                for (int i = 0; i < 2; i++) {
                    caught(() -> breaker.executeRunnable(() -> {
                        throw new IllegalStateException("provider failed");
                    })); // two failed provider calls open it
                }
                // the breaker guards the provider call: the call refused is a provider call (as Node's opossum pair)
                return new Raised(caught(() -> breaker.executeRunnable(() -> { })), Origin.ORIGIN_PROVIDER, RuntimeFacts.NONE);
            };
            // Half-open, its one permitted probe in flight: resilience4j refuses the next call.
            case "java.resilience4j-circuitbreaker-half-open::breaker.half-open" -> env ->
                    new Raised(halfOpenRefusal(), Origin.ORIGIN_RUNTIME, RuntimeFacts.NONE);
            case "java.resilience4j-circuitbreaker-half-open-own-guard::breaker.half-open" -> env ->
                    new Raised(halfOpenRefusal(), Origin.ORIGIN_RUNTIME, RuntimeFacts.refusedBy(RefusedBy.BREAKER));
            // The runtime's own guards described as such (origin runtime, refusedBy), whatever the type.
            case "java.resilience4j-circuitbreaker-own-guard::breaker.open" -> env -> {
                CircuitBreaker breaker = CircuitBreaker.of("provider", CircuitBreakerConfig.custom()
                        .slidingWindowSize(2).minimumNumberOfCalls(2).failureRateThreshold(50).build());
                breaker.transitionToOpenState();
                return new Raised(caught(() -> breaker.executeRunnable(() -> { })), Origin.ORIGIN_RUNTIME,
                        RuntimeFacts.refusedBy(RefusedBy.BREAKER));
            };
            case "java.resilience4j-ratelimiter-own-guard::quota.limiter" -> env -> {
                RateLimiter limiter = RateLimiter.of("runtime", RateLimiterConfig.custom().limitForPeriod(1)
                        .limitRefreshPeriod(Duration.ofMinutes(1)).timeoutDuration(Duration.ZERO).build());
                limiter.executeRunnable(() -> { });
                return new Raised(caught(() -> limiter.executeRunnable(() -> { })), Origin.ORIGIN_RUNTIME,
                        RuntimeFacts.refusedBy(RefusedBy.RATE_LIMITER));
            };
            case "java.semaphore-try-acquire::quota.bulkhead" -> env -> {
                Semaphore cap = new Semaphore(1);
                cap.acquire();
                try {
                    return new Raised(caught(() -> {
                        if (!cap.tryAcquire()) {
                            throw new IllegalStateException("concurrency cap of 1 provider call reached");
                        }
                    }), Origin.ORIGIN_RUNTIME, RuntimeFacts.refusedBy(RefusedBy.CONCURRENCY_LIMIT));
                } finally {
                    cap.release();
                }
            };
            case "java.quota-check::quota.tenant" -> env -> new Raised(caught(() -> {
                throw new IllegalStateException("tenant t-42 used its monthly quota of 1000000 tokens");
            }), Origin.ORIGIN_RUNTIME, RuntimeFacts.refusedBy(RefusedBy.QUOTA));
            case "java.step-budget::budget.tree" -> env -> new Raised(caught(() -> {
                throw new IllegalStateException("the run's step budget of 25 is used up");
            }), Origin.ORIGIN_RUNTIME, RuntimeFacts.refusedBy(RefusedBy.BUDGET));
            // Our own content guard refusing the model's output (the application's own check).
            case "java.regex-guard::guard.blocked" -> env -> new Raised(caught(() -> {
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)\\b\\d{3}-\\d{2}-\\d{4}\\b")
                        .matcher("the customer's SSN is 078-05-1120");
                if (m.find()) {
                    throw new SecurityException("output refused by our content policy: it holds an SSN at " + m.start());
                }
            }), Origin.ORIGIN_GUARD, RuntimeFacts.NONE);
            // An interceptor's deliberate veto: the application's own exception type.
            case "java.interceptor-veto::veto.budget" -> env -> veto(Veto.BUDGET);
            case "java.interceptor-veto::veto.quota" -> env -> veto(Veto.QUOTA);
            case "java.interceptor-veto::veto.policy" -> env -> veto(Veto.POLICY);
            // The agent definition failing to parse.
            case "java.jackson-parse::definition.syntax" -> env -> new Raised(
                    caught(() -> Worker.JSON.readTree("{\"name\": \"triage\",}")),
                    Origin.ORIGIN_RUNTIME, RuntimeFacts.stage(Stage.PARSE));
            // Reconciliation of an orphaned run: its worker process is gone.
            case "java.process-handle::reconcile.vanished" -> env -> reconciled(0);
            case "java.process-handle::reconcile.after-provider" -> env -> reconciled(3);
            default -> throw new IllegalArgumentException("no such pair " + id);
        };
    }

    /**
     * The run's deadline around a blocking provider call: {@code Future.get(timeout)} fires,
     * the runtime cancels the call's task (interrupting its thread), and the exception the call
     * itself raised on that cancel is what this returns.
     */
    static Throwable underRunDeadline(Body call) throws Exception {
        CompletableFuture<Throwable> raised = new CompletableFuture<>();
        Future<?> task = POOL.submit(() -> {
            try {
                call.run();
                raised.completeExceptionally(new AssertionError("the provider call returned"));
            } catch (Throwable t) {
                raised.complete(t);
            }
        });
        Throwable deadline = caught(() -> task.get(SHORT.toMillis(), TimeUnit.MILLISECONDS));
        if (!(deadline instanceof TimeoutException)) {
            throw new AssertionError("the run's deadline did not fire: " + deadline);
        }
        task.cancel(true);
        return raised.get(5, TimeUnit.SECONDS);
    }

    /** resilience4j half-open with one permitted call, that probe in flight: the next is refused. */
    static Throwable halfOpenRefusal() throws Exception {
        CircuitBreaker breaker = CircuitBreaker.of("provider", CircuitBreakerConfig.custom()
                .permittedNumberOfCallsInHalfOpenState(1).build());
        breaker.transitionToOpenState();
        breaker.transitionToHalfOpenState();
        CountDownLatch probing = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<?> probe = POOL.submit(() -> breaker.executeCallable(() -> {
            probing.countDown();
            return release.await(5, TimeUnit.SECONDS);
        }));
        probing.await(5, TimeUnit.SECONDS);
        try {
            return caught(() -> breaker.executeRunnable(() -> { }));
        } finally {
            release.countDown();
            probe.get(5, TimeUnit.SECONDS);
        }
    }

    static Raised veto(Veto why) {
        return new Raised(caught(() -> {
            throw new IllegalStateException("next step declined by the interceptor");
        }), Origin.ORIGIN_INTERCEPTOR, RuntimeFacts.veto(why));
    }

    static Raised reconciled(long providerCalls) throws Exception {
        Process p = new ProcessBuilder("true").start();
        long pid = p.pid();
        p.waitFor(5, TimeUnit.SECONDS);
        Throwable gone = caught(() -> ProcessHandle.of(pid).orElseThrow(
                () -> new IllegalStateException("the run's worker process " + pid + " is gone")));
        return new Raised(gone, Origin.ORIGIN_RECONCILER, RuntimeFacts.reconciled(providerCalls));
    }

    static String sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return "late";
    }

    private RuntimePairs() {}
}
