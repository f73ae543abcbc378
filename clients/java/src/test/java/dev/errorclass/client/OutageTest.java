package dev.errorclass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.errorclass.v1.ClassifyRequest;
import dev.errorclass.v1.ClassifyResponse;
import dev.errorclass.v1.ErrorClassifierGrpc;
import dev.errorclass.v1.GetRulesetRequest;
import dev.errorclass.v1.Origin;
import dev.errorclass.v1.RulesetInfo;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What the outage vectors do not say (they run in {@link VectorsTest}, through {@link Outage}):
 * a hung server, a service that comes back, and that it is the retry throttling of facts.json
 * that bounds the attempts an outage costs. Real sockets and real grpc-java servers on
 * 127.0.0.1 throughout.
 */
class OutageTest {

    private static final RuntimeException ERROR = new RuntimeException("boom");

    @Test
    void aHungServerCostsOneDeadlineThenShortCircuits() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            ClassifierClient.Options options = ClassifierClient.Options.DEFAULTS.withTimeout(Duration.ofMillis(200));
            try (ClassifierClient client = ClassifierClient.connect("127.0.0.1:" + silent.getLocalPort(), options)) {
                long start = System.nanoTime();
                Classification.Unclassified first = assertInstanceOf(Classification.Unclassified.class,
                        client.classify(ERROR, Origin.ORIGIN_PROVIDER, ""));
                long firstMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertEquals(Status.Code.DEADLINE_EXCEEDED, first.status());
                assertEquals("java.lang.RuntimeException", first.descriptor().getType());
                assertTrue(client.circuitOpen(), "DEADLINE_EXCEEDED opens the breaker at once");
                long second = System.nanoTime();
                Classification.Unclassified fast = assertInstanceOf(Classification.Unclassified.class,
                        client.classify(ERROR, Origin.ORIGIN_PROVIDER, ""));
                assertTrue(fast.shortCircuited());
                assertTrue(System.nanoTime() - second < TimeUnit.MILLISECONDS.toNanos(50), "a short-circuited call waits for nothing");
                // never READY: the first call may wait FIRST_CONNECT, and no call after it waits at all
                assertTrue(firstMs < ClassifierClient.FIRST_CONNECT.toMillis() + 1000, "first call took " + firstMs + " ms");
            }
        }
    }

    /** A classifier that answers UNAVAILABLE while {@code down}, and Unknown otherwise. */
    static final class Flaky extends ErrorClassifierGrpc.ErrorClassifierImplBase implements ServerInterceptor {
        final AtomicBoolean down = new AtomicBoolean(true);
        final AtomicInteger probes = new AtomicInteger();

        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            if (call.getMethodDescriptor().getBareMethodName().equals("GetRuleset")) {
                probes.incrementAndGet();
            }
            if (down.get()) {
                call.close(Status.UNAVAILABLE.withDescription("down"), new Metadata());
                return new ServerCall.Listener<>() {};
            }
            return next.startCall(call, headers);
        }

        @Override
        public void classify(ClassifyRequest request, StreamObserver<ClassifyResponse> out) {
            out.onNext(ClassifyResponse.newBuilder().setClassName("Unknown").setRulesetVersion("test").build());
            out.onCompleted();
        }

        @Override
        public void getRuleset(GetRulesetRequest request, StreamObserver<RulesetInfo> out) {
            out.onNext(RulesetInfo.newBuilder().setVersion("test").build());
            out.onCompleted();
        }
    }

    @Test
    void theBreakerOpensAfterThreeAndAProbeClosesItWhenTheServiceIsBack() throws Exception {
        Flaky flaky = new Flaky();
        Server server = Outage.serve(flaky, flaky);
        try (ClassifierClient client = ClassifierClient.connect("127.0.0.1:" + server.getPort())) {
            for (int i = 1; i <= Facts.BREAKER_FAILURES; i++) {
                Classification.Unclassified u = assertInstanceOf(Classification.Unclassified.class,
                        client.classify(ERROR, Origin.ORIGIN_PROVIDER, "openai"));
                assertEquals(Status.Code.UNAVAILABLE, u.status());
                assertFalse(u.shortCircuited());
                assertEquals(i == Facts.BREAKER_FAILURES, client.circuitOpen(), "open after call " + i);
            }
            assertTrue(assertInstanceOf(Classification.Unclassified.class,
                    client.classify(ERROR, Origin.ORIGIN_PROVIDER, "openai")).shortCircuited());
            assertEquals(0, flaky.probes.get(), "the first probe waits BREAKER_RESET_MS");
            flaky.down.set(false);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Facts.BREAKER_RESET_MS + 3000L);
            while (client.circuitOpen() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertFalse(client.circuitOpen(), "a successful probe closes the breaker");
            assertEquals(1, flaky.probes.get());
            Classification.Classified c = assertInstanceOf(Classification.Classified.class,
                    client.classify(ERROR, Origin.ORIGIN_PROVIDER, "openai"));
            assertEquals("test", c.rulesetVersion());
        } finally {
            Outage.stop(server);
        }
    }

    /**
     * The outage vector allows 20 to 25 attempts for 20 calls; without the retryThrottling of
     * facts.json's service config the same 20 calls cost every try (60): the throttling, not
     * the harness, is what bounds them.
     */
    @Test
    @SuppressWarnings("unchecked")
    void withoutRetryThrottlingEveryCallTriesThreeTimes() throws Exception {
        Outage.Unavailable counter = new Outage.Unavailable();
        Server server = Outage.serve(counter, new ErrorClassifierGrpc.ErrorClassifierImplBase() {});
        Map<String, Object> config = new HashMap<>((Map<String, Object>) ClassifierClient.serviceConfig(Facts.ATTEMPTS));
        assertTrue(config.containsKey("retryThrottling"), "the service config throttles retries");
        config.remove("retryThrottling");
        ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext()
                .defaultServiceConfig(config).enableRetry().build();
        ClassifierClient.Options options = ClassifierClient.Options.DEFAULTS.withBreaker(false).withTimeout(Duration.ofSeconds(5));
        try (ClassifierClient client = ClassifierClient.over(channel, options)) {
            for (int i = 0; i < 20; i++) {
                assertInstanceOf(Classification.Unclassified.class, client.classify(ERROR, Origin.ORIGIN_PROVIDER, ""));
            }
            assertEquals(20 * Facts.ATTEMPTS, counter.attempts.get());
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            Outage.stop(server);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void oneAttemptMeansNoRetryPolicyButStillThrottling() {
        Map<String, ?> config = ClassifierClient.serviceConfig(1);
        Map<String, ?> method = ((List<Map<String, ?>>) config.get("methodConfig")).get(0);
        assertFalse(method.containsKey("retryPolicy"));
        assertEquals(Facts.SERVICE_CONFIG.get("retryThrottling"), config.get("retryThrottling"));
        assertEquals(List.of(Map.of("service", Facts.SERVICE_NAME)), method.get("name"));
        Map<String, ?> three = ((List<Map<String, ?>>) ClassifierClient.serviceConfig(3).get("methodConfig")).get(0);
        assertEquals(3.0, ((Map<String, ?>) three.get("retryPolicy")).get("maxAttempts"));
    }

    @Test
    void optionsRefuseNonsense() {
        assertThrows(IllegalArgumentException.class, () -> ClassifierClient.Options.DEFAULTS.withAttempts(0));
        assertThrows(IllegalArgumentException.class, () -> ClassifierClient.Options.DEFAULTS.withTimeout(Duration.ZERO));
        assertEquals(Duration.ofMillis(Facts.DEADLINE_MS), ClassifierClient.Options.DEFAULTS.timeout());
    }
}
