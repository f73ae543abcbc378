package dev.errorclass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonObject;
import dev.errorclass.v1.ErrorClassifierGrpc;
import dev.errorclass.v1.ExceptionDescriptor;
import io.grpc.BindableService;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The outage vectors (clients/spec/vectors/outage.json) against real sockets: a loopback port
 * nothing listens on ({@code stopped}), or a grpc-java server on 127.0.0.1 that answers every
 * call UNAVAILABLE and counts the attempts it sees ({@code unavailable}).
 */
final class Outage {
    private Outage() {}

    /** A loopback port that was bound and closed: connecting to it is refused. */
    static int stoppedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** A grpc-java server on 127.0.0.1 serving the classifier's service through {@code interceptor}. */
    static Server serve(ServerInterceptor interceptor, BindableService service) throws IOException {
        return NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(ServerInterceptors.intercept(service, interceptor))
                .build()
                .start();
    }

    /** Every call it sees answered UNAVAILABLE, and counted. */
    static final class Unavailable implements ServerInterceptor {
        final AtomicInteger attempts = new AtomicInteger();

        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            attempts.incrementAndGet();
            call.close(Status.UNAVAILABLE.withDescription("the outage vector's server"), new Metadata());
            return new ServerCall.Listener<>() {};
        }
    }

    static void stop(Server server) throws InterruptedException {
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
    }

    static void run(JsonObject input, JsonObject want) throws Exception {
        List<ExceptionDescriptor> descriptors = new ArrayList<>();
        input.getAsJsonArray("descriptors").forEach(d -> descriptors.add(Spec.descriptor(d.getAsJsonObject())));
        Unavailable counter = new Unavailable();
        Server server = null;
        String target;
        switch (input.get("server").getAsString()) {
            case "stopped" -> target = "127.0.0.1:" + stoppedPort();
            case "unavailable" -> {
                server = serve(counter, new ErrorClassifierGrpc.ErrorClassifierImplBase() {});
                target = "127.0.0.1:" + server.getPort();
            }
            default -> throw new AssertionError("server: no such outage server " + input.get("server"));
        }
        try {
            calls(target, input, want, descriptors, counter);
        } finally {
            if (server != null) {
                stop(server);
            }
        }
    }

    private static void calls(String target, JsonObject input, JsonObject want, List<ExceptionDescriptor> descriptors,
            Unavailable counter) throws Exception {
        if (input.has("warm_up") && input.get("warm_up").getAsBoolean()) {
            try (ClassifierClient other = ClassifierClient.connect(target, ClassifierClient.Options.DEFAULTS.withBreaker(false))) {
                other.classify(descriptors.get(0)); // untimed: loads gRPC's classes in this JVM
            }
        }
        int warmAttempts = counter.attempts.get();
        boolean batch = switch (input.get("call").getAsString()) {
            case "classify" -> false;
            case "classify_batch" -> true;
            default -> throw new AssertionError("call: no such call " + input.get("call"));
        };
        int calls = input.get("calls").getAsInt();
        long bound = want.has("within_ms") ? want.get("within_ms").getAsLong() + want.get("slack_ms").getAsLong() : Long.MAX_VALUE;
        int openAfter = want.has("breaker_open_after") ? want.get("breaker_open_after").getAsInt() : -1;
        List<Long> millis = new ArrayList<>();
        ClassifierClient.Options options = ClassifierClient.Options.DEFAULTS.withBreaker(input.get("breaker").getAsBoolean());
        try (ClassifierClient client = ClassifierClient.connect(target, options)) {
            for (int i = 1; i <= calls; i++) {
                long start = System.nanoTime();
                List<Classification> got = batch ? client.classifyBatch(descriptors) : List.of(client.classify(descriptors.get(0)));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                millis.add(ms);
                String call = "call " + i + ": ";
                assertEquals("unclassified", Spec.text(want, "outcome"), "outcome: this client knows only unclassified");
                assertEquals(batch ? descriptors.size() : 1, got.size(), call + "one outcome per descriptor");
                for (int j = 0; j < got.size(); j++) {
                    Classification.Unclassified u = assertInstanceOf(Classification.Unclassified.class, got.get(j), call + "outcome");
                    if (want.get("keeps_descriptors").getAsBoolean()) {
                        assertEquals(descriptors.get(j), u.descriptor(), call + "keeps_descriptors: descriptor " + j);
                    }
                    if (openAfter >= 0) {
                        assertEquals(i > openAfter, u.shortCircuited(), call + "breaker_open_after " + openAfter + ": short-circuited");
                    }
                }
                if (ms > bound) {
                    fail(call + "within_ms: took " + ms + " ms, over " + bound + " (within_ms plus slack_ms)");
                }
                if (openAfter >= 0) {
                    assertEquals(i >= openAfter, client.circuitOpen(), call + "breaker_open_after " + openAfter + ": open");
                }
            }
        }
        int attempts = counter.attempts.get() - warmAttempts;
        if (want.has("attempts_at_least")) {
            assertTrue(attempts >= want.get("attempts_at_least").getAsInt(), "attempts_at_least: the server saw " + attempts);
        }
        if (want.has("attempts_at_most")) {
            assertTrue(attempts <= want.get("attempts_at_most").getAsInt(), "attempts_at_most: the server saw " + attempts);
        }
        assertFalse(millis.isEmpty(), "calls: none made");
        System.out.println("outage " + input.get("server").getAsString() + " " + input.get("call").getAsString()
                + ": per-call ms " + millis + ", attempts the server saw " + attempts);
    }

}
