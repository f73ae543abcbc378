package dev.errorclass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.errorclass.v1.ClassifyResponse;
import dev.errorclass.v1.ErrorClassifierGrpc;
import dev.errorclass.v1.ExceptionDescriptor;
import dev.errorclass.v1.GetBundleRequest;
import dev.errorclass.v1.GetBundleResponse;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client that survives the service, against one real {@code classifier serve} ({@link
 * LiveServer}: the repository's rules, the bundle signed with the TEST key {@code a}, a decision
 * log): the bundle it fetches and the keys that refuse one, the refresh when the service names
 * another ruleset or bundle, the fallback that answers as the service did, local-first and its
 * reports. A service that is down is a loopback port nothing listens on.
 */
class BundleClientTest {
    @TempDir
    static Path tmp;

    private static LiveServer server;
    private static GetBundleResponse served;
    private static Path servedFile;
    private static Path kindsFile;

    private static final Duration DEADLINE = Duration.ofMillis(500);

    @BeforeAll
    static void serve() throws Exception {
        server = LiveServer.get();
        ManagedChannel channel = ManagedChannelBuilder.forTarget(server.address).usePlaintext().build();
        try {
            served = ErrorClassifierGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                    .getBundle(GetBundleRequest.getDefaultInstance());
        } finally {
            channel.shutdownNow();
        }
        servedFile = tmp.resolve("served.bundle.json");
        Files.write(servedFile, served.getBundle().toByteArray());
        Files.write(tmp.resolve("served.bundle.json.sig.json"), served.getSignatures().toByteArray());
        byte[] kinds = Files.readAllBytes(Spec.dir().resolve("bundles/kinds.json"));
        kindsFile = tmp.resolve("kinds.bundle.json");
        Files.write(kindsFile, kinds);
        Files.writeString(tmp.resolve("kinds.bundle.json.sig.json"), BundleTest.sign(kinds, "TEST-ONLY-a"));
    }

    @AfterAll
    static void threadsAreDaemons() {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("errorclass-")) {
                assertTrue(t.isDaemon(), t.getName() + " keeps the JVM alive");
            }
        }
    }

    private static ClassifierClient.Options trusting(String... keys) {
        List<Path> files = new ArrayList<>();
        for (String k : keys) {
            files.add(LiveServer.key(k + ".pub"));
        }
        return ClassifierClient.Options.DEFAULTS.withTimeout(DEADLINE).withTrustedKeyFiles(files);
    }

    private static String down() throws Exception {
        return "127.0.0.1:" + Outage.stoppedPort();
    }

    private static void eventually(String what, BooleanSupplier done) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within 10 s: " + what);
            }
            Thread.sleep(20);
        }
    }

    /**
     * Descriptors of the library's cases, the first hundred and every one with retry evidence,
     * and waits of every kind of source that reads alike on any clock (a date beside the
     * provider's own date header).
     */
    private static List<ExceptionDescriptor> descriptors() throws Exception {
        List<ExceptionDescriptor> out = new ArrayList<>();
        int i = 0;
        for (JsonElement v : Spec.read(Spec.dir().resolve("vectors/bundle.library.json")).getAsJsonArray("vectors")) {
            JsonObject input = v.getAsJsonObject().getAsJsonObject("input");
            if (i++ < 100 || input.has("now")) {
                out.add(BundleVectors.descriptor(input));
            }
        }
        ExceptionDescriptor.Builder limited = ExceptionDescriptor.newBuilder().setType("openai.RateLimitError")
                .addSupertypes("openai.APIStatusError").setHttpStatus(429).setProvider("openai")
                .setOrigin(dev.errorclass.v1.Origin.ORIGIN_PROVIDER);
        out.add(limited.clone().putAttributes(RetryAfter.RETRY_AFTER_MS, "1500").build());
        out.add(limited.clone().putAttributes(RetryAfter.RETRY_AFTER, "120").build());
        out.add(limited.clone().putAttributes(RetryAfter.DATE, "Thu, 01 Jan 2026 00:00:00 GMT")
                .putAttributes(RetryAfter.RETRY_AFTER, "Thursday, 01-Jan-26 00:00:45 GMT").build());
        out.add(limited.clone().putAttributes(RetryAfter.OPENAI_RESETS.get(1), "6.5s").build());
        return out;
    }

    @Test
    void theFallbackAnswersAsTheServiceDidWithinTheDeadline() throws Exception {
        List<ExceptionDescriptor> descriptors = descriptors();
        List<ClassifyResponse> fromService = new ArrayList<>();
        try (ClassifierClient remote = ClassifierClient.connect(server.address)) {
            for (ExceptionDescriptor d : descriptors) {
                Classification.Classified c = assertInstanceOf(Classification.Classified.class, remote.classify(d));
                assertFalse(c.local());
                fromService.add(c.response());
            }
        }
        ClassifyResponse waited = fromService.get(descriptors.size() - 4);
        assertEquals(1, waited.getRetryAfter().getSeconds(), "the service's wait, on the wire");
        assertEquals(500_000_000, waited.getRetryAfter().getNanos());
        assertEquals(RetryAfter.RETRY_AFTER_MS, waited.getRetryAfterSource());
        assertEquals(RetryAfter.RETRY_AFTER + RetryAfter.CAPPED_LABEL, fromService.get(descriptors.size() - 3).getRetryAfterSource());

        ClassifierClient.Options options = trusting("TEST-ONLY-a").withBundleFile(servedFile).withFetchBundle(false);
        try (ClassifierClient client = ClassifierClient.connect(down(), options)) {
            assertEquals(served.getBundleDigest(), client.bundle().orElseThrow().bundleDigest(), "the start file, verified");
            int withWait = 0;
            for (int i = 0; i < descriptors.size(); i++) {
                long start = System.nanoTime();
                Classification got = client.classify(descriptors.get(i));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                Classification.Classified c = assertInstanceOf(Classification.Classified.class, got, "descriptor " + i);
                assertTrue(c.local(), "marked local");
                assertEquals(served.getBundleDigest(), c.bundleDigest());
                assertEquals(fromService.get(i), c.response(), "descriptor " + i + ": every field as the service answered");
                assertTrue(ms <= DEADLINE.toMillis() + 250, "descriptor " + i + " took " + ms + " ms");
                withWait += c.retryAfter().isPresent() ? 1 : 0;
            }
            assertTrue(withWait >= 5, "waits compared: " + withWait);
            assertTrue(client.circuitOpen(), "the service is down");
            List<Classification> batch = client.classifyBatch(descriptors.subList(0, 3));
            for (int i = 0; i < 3; i++) {
                assertEquals(fromService.get(i), assertInstanceOf(Classification.Classified.class, batch.get(i)).response());
            }
            assertEquals(descriptors.size() + 3, client.pendingDecisions(), "the fallback's decisions, kept to be reported");
        }
        try (ClassifierClient none = ClassifierClient.connect(down(), ClassifierClient.Options.DEFAULTS.withTimeout(DEADLINE))) {
            assertInstanceOf(Classification.Unclassified.class, none.classify(descriptors.get(0)), "no bundle: as before");
        }
    }

    @Test
    void theServingBundleIsFetchedAtStartAndRefreshedWithIfNoneMatch() throws Exception {
        try (ClassifierClient client = ClassifierClient.connect(server.address, trusting("TEST-ONLY-b", "TEST-ONLY-a"))) {
            assertTrue(client.awaitBundleFetch(Duration.ofSeconds(20)));
            assertEquals(served.getBundleDigest(), client.bundle().orElseThrow().bundleDigest());
            long unchanged = client.unchangedBundleFetches();
            assertFalse(client.refreshBundle(), "the same bundle");
            assertEquals(unchanged + 1, client.unchangedBundleFetches(), "answered unchanged, without the bytes");
            assertEquals(0, client.bundleRefusals());
        }
    }

    @Test
    void anAnswerNamingAnotherRulesetRefreshesTheBundle() throws Exception {
        try (ClassifierClient client = ClassifierClient.connect(server.address, trusting("TEST-ONLY-a"))) {
            assertTrue(client.awaitBundleFetch(Duration.ofSeconds(20)));
            Bundle kinds = client.loadBundle(kindsFile, null);
            assertEquals(kinds, client.bundle().orElseThrow());
            Classification c = client.classify(ExceptionDescriptor.newBuilder().setType("x.Y").build());
            assertFalse(assertInstanceOf(Classification.Classified.class, c).local());
            eventually("the serving bundle back in use", () -> client.bundle().orElseThrow().bundleDigest().equals(served.getBundleDigest()));
        }
    }

    @Test
    void aReportNamingAnotherBundleRefreshesIt() throws Exception {
        ClassifierClient.Options options = trusting("TEST-ONLY-a").withMode(ClassifierClient.Mode.LOCAL_FIRST)
                .withBundleFile(kindsFile).withFetchBundle(true).withReports(100, Duration.ofHours(1), 1000);
        try (ClassifierClient client = ClassifierClient.connect(server.address, options)) {
            assertTrue(client.awaitBundleFetch(Duration.ofSeconds(20)));
            client.loadBundle(kindsFile, null);
            Classification.Classified c = assertInstanceOf(Classification.Classified.class,
                    client.classify(ExceptionDescriptor.newBuilder().setType("k.Retry").setCode("own").build()));
            assertTrue(c.local());
            assertEquals(1, client.flushDecisions());
            eventually("the serving bundle in use", () -> client.bundle().orElseThrow().bundleDigest().equals(served.getBundleDigest()));
        }
    }

    @Test
    void aRefusedBundleIsRecordedAndTheOneInUseStays() throws Exception {
        // the service's bundle is signed by a, which this client does not trust
        try (ClassifierClient client = ClassifierClient.connect(server.address, trusting("TEST-ONLY-b"))) {
            assertTrue(client.awaitBundleFetch(Duration.ofSeconds(20)));
            assertTrue(client.bundle().isEmpty());
            assertEquals(1, client.bundleRefusals());
            assertEquals("unknown_key", client.lastBundleRefusal().orElseThrow().code());
        }
        ClassifierClient.Options options = trusting("TEST-ONLY-a").withBundleFile(servedFile).withFetchBundle(false);
        try (ClassifierClient client = ClassifierClient.connect(server.address, options)) {
            byte[] tampered = served.getBundle().toByteArray();
            tampered[tampered.length / 2] ^= 1;
            Path file = tmp.resolve("tampered.bundle.json");
            Files.write(file, tampered);
            BundleException e = assertThrows(BundleException.class,
                    () -> client.loadBundle(file, tmp.resolve("served.bundle.json.sig.json")));
            assertEquals("bad_signature", e.code());
            Path unsigned = tmp.resolve("unsigned.bundle.json");
            Files.write(unsigned, served.getBundle().toByteArray());
            assertEquals("unsigned", assertThrows(BundleException.class, () -> client.loadBundle(unsigned, null)).code());
            Path malformed = tmp.resolve("malformed.sig.json");
            Files.writeString(malformed, "{\"signatures\": 3}");
            assertEquals("malformed_signatures", assertThrows(BundleException.class, () -> client.loadBundle(unsigned, malformed)).code());
            Path garbage = tmp.resolve("garbage.bundle.json");
            byte[] notABundle = "{\"format\": \"something else\"}".getBytes(StandardCharsets.UTF_8);
            Files.write(garbage, notABundle);
            Files.writeString(tmp.resolve("garbage.bundle.json.sig.json"), BundleTest.sign(notABundle, "TEST-ONLY-a"));
            assertEquals("invalid_bundle", assertThrows(BundleException.class, () -> client.loadBundle(garbage, null)).code());
            assertEquals(4, client.bundleRefusals());
            assertEquals("invalid_bundle", client.lastBundleRefusal().orElseThrow().code());
            assertEquals(served.getBundleDigest(), client.bundle().orElseThrow().bundleDigest(), "the bundle in use stays");
        }
    }

    @Test
    void aRefusedStartFileIsAnErrorAtConstruction() throws Exception {
        String target = down();
        BundleException wrongKey = assertThrows(BundleException.class,
                () -> ClassifierClient.connect(target, trusting("TEST-ONLY-c").withBundleFile(servedFile)));
        assertEquals("unknown_key", wrongKey.code());
        Path unsigned = tmp.resolve("start.unsigned.json");
        Files.write(unsigned, served.getBundle().toByteArray());
        assertEquals("unsigned", assertThrows(BundleException.class,
                () -> ClassifierClient.connect(target, trusting("TEST-ONLY-a").withBundleFile(unsigned))).code());
        ClassifierClient.Options noKeys = ClassifierClient.Options.DEFAULTS.withBundleFile(unsigned);
        BundleException notAllowed = assertThrows(BundleException.class, () -> ClassifierClient.connect(target, noKeys));
        assertEquals("unsigned", notAllowed.code());
        assertTrue(notAllowed.getMessage().contains("allow unsigned"), notAllowed.getMessage());
        assertEquals("unreadable_file", assertThrows(BundleException.class,
                () -> ClassifierClient.connect(target, noKeys.withBundleFile(tmp.resolve("none.json")))).code());
        try (ClassifierClient allowed = ClassifierClient.connect(target, noKeys.withAllowUnsigned(true).withFetchBundle(false))) {
            assertEquals(served.getBundleDigest(), allowed.bundle().orElseThrow().bundleDigest(), "unsigned, explicitly allowed");
        }
    }

    @Test
    void localFirstAnswersInProcessAndReportsInBatches() throws Exception {
        ClassifierClient.Options options = trusting("TEST-ONLY-a").withMode(ClassifierClient.Mode.LOCAL_FIRST)
                .withBundleFile(servedFile).withReports(3, Duration.ofHours(1), 1000);
        List<ExceptionDescriptor> descriptors = new ArrayList<>();
        String marker = "local-first-" + System.nanoTime();
        for (int i = 0; i < 4; i++) {
            descriptors.add(ExceptionDescriptor.newBuilder().setType("com.example.Weird" + i).setMessage(marker).build());
        }
        try (ClassifierClient client = ClassifierClient.connect(server.address, options)) {
            for (ExceptionDescriptor d : descriptors.subList(0, 3)) {
                Classification.Classified c = assertInstanceOf(Classification.Classified.class, client.classify(d));
                assertTrue(c.local());
                assertEquals("Unknown", c.className());
            }
            eventually("a full batch reported at once", () -> client.reportedDecisions() == 3);
            client.classify(descriptors.get(3));
            assertEquals(1, client.pendingDecisions(), "the interval (an hour) has not passed");
        } // close flushes the last one
        eventually("the four in the server's decision log, marked local", () -> {
            try {
                return server.decisions().stream().filter(l -> l.toString().contains(marker))
                        .filter(l -> l.get("local").getAsBoolean() && l.get("bundle_digest").getAsString().equals(served.getBundleDigest()))
                        .count() == 4;
            } catch (Exception e) {
                return false;
            }
        });

        ClassifierClient.Options timed = options.withReports(100, Duration.ofMillis(100), 1000);
        try (ClassifierClient client = ClassifierClient.connect(server.address, timed)) {
            client.classify(descriptors.get(0));
            eventually("reported when the interval passed", () -> client.reportedDecisions() == 1 && client.pendingDecisions() == 0);
        }
    }

    @Test
    void theQueueIsBoundedAndAFailedReportIsKept() throws Exception {
        ClassifierClient.Options options = trusting("TEST-ONLY-a").withMode(ClassifierClient.Mode.LOCAL_FIRST)
                .withBundleFile(servedFile).withFetchBundle(false).withReports(5, Duration.ofHours(1), 5);
        try (ClassifierClient client = ClassifierClient.connect(down(), options)) {
            for (int i = 0; i < 8; i++) {
                assertTrue(assertInstanceOf(Classification.Classified.class,
                        client.classify(ExceptionDescriptor.newBuilder().setType("x.E" + i).build())).local());
            }
            eventually("the oldest dropped", () -> client.droppedDecisions() == 3);
            assertEquals(5, client.pendingDecisions());
            assertThrows(StatusRuntimeException.class, client::flushDecisions);
            assertEquals(5, client.pendingDecisions(), "kept for the next report");
            assertEquals(0, client.reportedDecisions());
        }
    }

    /**
     * GetBundle answered UNAVAILABLE once, then the real served bundle: the client's own retry,
     * no sooner than its backoff. (A grpc-java server in front of nothing: the real server cannot
     * be made to fail one call.)
     */
    @Test
    void aFailedFetchIsRetriedAfterItsBackoff() throws Exception {
        List<Long> calls = java.util.Collections.synchronizedList(new ArrayList<>());
        io.grpc.Server flaky = Outage.serve(new io.grpc.ServerInterceptor() {
            @Override
            public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(io.grpc.ServerCall<Q, R> call, io.grpc.Metadata headers,
                    io.grpc.ServerCallHandler<Q, R> next) {
                if (call.getMethodDescriptor().getBareMethodName().equals("GetBundle") && calls.size() == 0) {
                    calls.add(System.nanoTime());
                    call.close(io.grpc.Status.UNAVAILABLE.withDescription("not yet"), new io.grpc.Metadata());
                    return new io.grpc.ServerCall.Listener<>() {};
                }
                return next.startCall(call, headers);
            }
        }, new ErrorClassifierGrpc.ErrorClassifierImplBase() {
            @Override
            public void getBundle(GetBundleRequest request, io.grpc.stub.StreamObserver<GetBundleResponse> out) {
                calls.add(System.nanoTime());
                out.onNext(served);
                out.onCompleted();
            }
        });
        try (ClassifierClient client = ClassifierClient.connect("127.0.0.1:" + flaky.getPort(),
                trusting("TEST-ONLY-a").withAttempts(1))) {
            eventually("the bundle fetched on the second try",
                    () -> client.bundle().map(b -> b.bundleDigest().equals(served.getBundleDigest())).orElse(false));
            assertEquals(2, calls.size());
            long waited = TimeUnit.NANOSECONDS.toMillis(calls.get(1) - calls.get(0));
            assertTrue(waited >= TimeUnit.NANOSECONDS.toMillis(BundleSource.FIRST_BACKOFF), "retried after " + waited + " ms");
        } finally {
            Outage.stop(flaky);
        }
    }

    @Test
    void localFirstWithoutABundleCallsTheService() throws Exception {
        ClassifierClient.Options options = ClassifierClient.Options.DEFAULTS.withMode(ClassifierClient.Mode.LOCAL_FIRST)
                .withFetchBundle(false);
        try (ClassifierClient client = ClassifierClient.connect(server.address, options)) {
            Classification.Classified c = assertInstanceOf(Classification.Classified.class,
                    client.classify(ExceptionDescriptor.newBuilder().setType("x.Y").build()));
            assertFalse(c.local());
            assertEquals(0, client.pendingDecisions());
        }
    }
}
