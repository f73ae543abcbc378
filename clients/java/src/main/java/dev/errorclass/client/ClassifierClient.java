package dev.errorclass.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import dev.errorclass.v1.ClassifyBatchRequest;
import dev.errorclass.v1.ClassifyRequest;
import dev.errorclass.v1.ClassifyResponse;
import dev.errorclass.v1.ErrorClassifierGrpc;
import dev.errorclass.v1.ExceptionDescriptor;
import dev.errorclass.v1.GetRulesetRequest;
import dev.errorclass.v1.Origin;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A client of the classifier service, with the behaviour every errorclass client has
 * (clients/spec/facts.json, {@code defaults} and {@code service_config}).
 *
 * <pre>{@code
 * try (ClassifierClient client = ClassifierClient.connect("classifier.internal:50051")) {
 *     Classification c = client.classify(e, Origin.ORIGIN_PROVIDER, "openai");
 * }
 * }</pre>
 *
 * <ul>
 *   <li><b>Deadline</b>: every call has one ({@link Options#timeout}, {@link Facts#DEADLINE_MS}
 *       by default): a loopback or in-cluster call answers in about a millisecond. Until the
 *       service has first answered, a call may wait up to {@link #FIRST_CONNECT} instead (see
 *       there why); a refused connection still fails at once.
 *   <li><b>Retries</b>: UNAVAILABLE is retried by gRPC's own retry policy ({@link
 *       Options#attempts}, {@link Facts#ATTEMPTS} tries with backoff), within the call's
 *       deadline and under gRPC's retry throttling ({@link Facts#SERVICE_CONFIG}: once half
 *       the tokens are spent no call is retried, so an outage causes no retry storm).
 *       Classifying is a pure function of the descriptor, so a retry is safe.
 *   <li><b>Breaker</b>: ({@link Breaker}) three service failures in a row, or one
 *       DEADLINE_EXCEEDED, open it; then calls answer {@link Classification.Unclassified} at
 *       once ({@code shortCircuited}) until a background probe finds the service back.
 *   <li><b>When the service cannot answer</b>: {@link Classification.Unclassified}, keeping the
 *       descriptor, never Unknown; nothing is thrown.
 *   <li><b>A refused descriptor</b>: INVALID_ARGUMENT raises {@link InvalidDescriptorException}
 *       with the server's field violations (its google.rpc.BadRequest detail).
 * </ul>
 */
public final class ClassifierClient implements AutoCloseable {
    private static final Metadata.Key<byte[]> STATUS_DETAILS =
            Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);
    private static final String TYPE_PREFIX = "type.googleapis.com/";

    /**
     * How a client calls: the deadline, the tries on UNAVAILABLE, and the breaker.
     *
     * <pre>{@code
     * ClassifierClient.connect(target, Options.DEFAULTS.withTimeout(Duration.ofMillis(100)).withBreaker(false))
     * }</pre>
     */
    public record Options(Duration timeout, int attempts, boolean breaker) {
        /** {@link Facts#DEADLINE_MS}, {@link Facts#ATTEMPTS} tries, the breaker on: every client's defaults. */
        public static final Options DEFAULTS = new Options(Duration.ofMillis(Facts.DEADLINE_MS), Facts.ATTEMPTS, true);

        public Options {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive, not " + timeout);
            }
            if (attempts < 1) {
                throw new IllegalArgumentException("attempts must be at least 1, not " + attempts);
            }
        }

        public Options withTimeout(Duration t) {
            return new Options(t, attempts, breaker);
        }

        /** Tries per call on UNAVAILABLE; 1 turns gRPC's retries off. */
        public Options withAttempts(int n) {
            return new Options(timeout, n, breaker);
        }

        public Options withBreaker(boolean on) {
            return new Options(timeout, attempts, on);
        }
    }

    /**
     * The longest a call waits until the service has first answered this client. A JVM's first
     * call loads and runs for the first time gRPC's, Netty's and the stubs' code: measured on a
     * 2-core machine at load 9, a fresh JVM's first Classify against a real {@code classifier
     * serve} took 0.7 to 1.6 s, even with the channel READY for two seconds before it (the
     * connection is not the cost; later calls took 10 to 120 ms). Under the 250 ms deadline
     * that call would answer Unclassified, and open the breaker, on a healthy service. It
     * costs nothing on an outage: a refused connection fails at once whatever the deadline,
     * and the breaker opens on a hung server's first DEADLINE_EXCEEDED, so that wait is paid
     * once. (The outage vectors' {@code warm_up} call, made by another client, loads the
     * classes; nothing ever answers the measured client, and its calls still come back within
     * the deadline because nothing listens, or the server answers UNAVAILABLE at once.)
     */
    public static final Duration FIRST_CONNECT = Duration.ofSeconds(5);

    private final ManagedChannel channel;
    private final boolean ownsChannel;
    private final Options options;
    private final ErrorClassifierGrpc.ErrorClassifierBlockingStub stub;
    private final Breaker breaker;
    private final Prober prober;
    private volatile boolean answered;

    private ClassifierClient(ManagedChannel channel, boolean ownsChannel, Options options) {
        this.channel = channel;
        this.ownsChannel = ownsChannel;
        this.options = options;
        this.stub = ErrorClassifierGrpc.newBlockingStub(channel);
        this.breaker = options.breaker() ? new Breaker() : null;
        this.prober = options.breaker() ? new Prober(breaker, this::probe) : null;
    }

    /** A plaintext channel to {@code target} (host:port) with the default options. */
    public static ClassifierClient connect(String target) {
        return connect(target, Options.DEFAULTS);
    }

    /** A plaintext channel to {@code target} (host:port), with the service config of {@link #serviceConfig}. */
    public static ClassifierClient connect(String target, Options options) {
        ManagedChannelBuilder<?> builder = ManagedChannelBuilder.forTarget(target)
                .usePlaintext()
                .defaultServiceConfig(serviceConfig(options.attempts()));
        if (options.attempts() > 1) {
            builder.enableRetry();
        } else {
            builder.disableRetry();
        }
        ManagedChannel channel = builder.build();
        channel.getState(true); // connect now: the first classify should not pay for the handshake
        return new ClassifierClient(channel, true, options);
    }

    /**
     * A client over a channel the application built (TLS, another transport, interceptors);
     * the application keeps and closes it. Give its builder {@code
     * defaultServiceConfig(ClassifierClient.serviceConfig(attempts)).enableRetry()} for the
     * retries and their throttling.
     */
    public static ClassifierClient over(ManagedChannel channel, Options options) {
        return new ClassifierClient(channel, false, options);
    }

    /**
     * The service config every errorclass client sets ({@link Facts#SERVICE_CONFIG}): retry of
     * UNAVAILABLE with {@code attempts} tries (1: no retry policy) and retry throttling, as
     * {@code ManagedChannelBuilder.defaultServiceConfig} takes it.
     */
    @SuppressWarnings("unchecked")
    public static Map<String, ?> serviceConfig(int attempts) {
        if (attempts < 1) {
            throw new IllegalArgumentException("attempts must be at least 1, not " + attempts);
        }
        Map<String, Object> config = new HashMap<>(Facts.SERVICE_CONFIG);
        List<Object> methods = new ArrayList<>();
        for (Object m : (List<Object>) Facts.SERVICE_CONFIG.get("methodConfig")) {
            Map<String, Object> method = new HashMap<>((Map<String, Object>) m);
            Object policy = method.get("retryPolicy");
            if (attempts == 1) {
                method.remove("retryPolicy");
            } else if (policy != null) {
                Map<String, Object> retry = new HashMap<>((Map<String, Object>) policy);
                retry.put("maxAttempts", (double) attempts);
                method.put("retryPolicy", retry);
            }
            methods.add(method);
        }
        config.put("methodConfig", methods);
        return config;
    }

    /** Describe {@code error} ({@link Descriptors#from}) and classify it. */
    public Classification classify(Throwable error, Origin origin, String provider) {
        return classify(Descriptors.from(error, origin, provider));
    }

    /** As {@link #classify(Throwable, Origin, String)}, with what only the runtime knows. */
    public Classification classify(Throwable error, Origin origin, String provider, RuntimeFacts facts) {
        return classify(Descriptors.from(error, origin, provider, facts));
    }

    /**
     * Classify a descriptor. Never throws for the service's failures (they are {@link
     * Classification.Unclassified}); throws {@link InvalidDescriptorException} for a refused one.
     */
    public Classification classify(ExceptionDescriptor descriptor) {
        return call(List.of(descriptor), () -> List.of(stub.withDeadlineAfter(deadlineNanos(), TimeUnit.NANOSECONDS)
                .classify(ClassifyRequest.newBuilder().setDescriptor(descriptor).build()))).get(0);
    }

    /**
     * Classify up to {@link Facts#MAX_BATCH} descriptors in one call: one answer per descriptor,
     * in order; when the service cannot answer, each is {@link Classification.Unclassified}
     * keeping its descriptor.
     */
    public List<Classification> classifyBatch(List<ExceptionDescriptor> descriptors) {
        if (descriptors.size() > Facts.MAX_BATCH) {
            throw new IllegalArgumentException(descriptors.size() + " descriptors exceed the batch limit of " + Facts.MAX_BATCH);
        }
        if (descriptors.isEmpty()) {
            return List.of();
        }
        ClassifyBatchRequest.Builder request = ClassifyBatchRequest.newBuilder();
        descriptors.forEach(d -> request.addRequests(ClassifyRequest.newBuilder().setDescriptor(d)));
        return call(descriptors, () -> stub.withDeadlineAfter(deadlineNanos(), TimeUnit.NANOSECONDS)
                .classifyBatch(request.build()).getResponsesList());
    }

    /** One call through the breaker: the answers, or each descriptor Unclassified. */
    private List<Classification> call(List<ExceptionDescriptor> descriptors, Supplier<List<ClassifyResponse>> send) {
        if (breaker != null && !breaker.allow()) {
            return unclassified(descriptors, Status.Code.UNAVAILABLE,
                    "circuit open: the service kept failing; not called (probing in the background)", true);
        }
        List<ClassifyResponse> responses;
        try {
            responses = send.get();
        } catch (StatusRuntimeException e) {
            Status status = e.getStatus();
            if (status.getCode() == Status.Code.INVALID_ARGUMENT) {
                answered = true;
                throw new InvalidDescriptorException(violations(e));
            }
            if (breaker != null && breaker.failed(status.getCode())) {
                prober.start();
            }
            String reason = status.getCode() + (status.getDescription() == null ? "" : ": " + status.getDescription());
            return unclassified(descriptors, status.getCode(), reason, false);
        }
        if (breaker != null) {
            breaker.succeeded();
        }
        answered = true;
        List<Classification> out = new ArrayList<>(descriptors.size());
        for (int i = 0; i < descriptors.size(); i++) {
            out.add(new Classification.Classified(descriptors.get(i), responses.get(i)));
        }
        return out;
    }

    private static List<Classification> unclassified(List<ExceptionDescriptor> descriptors, Status.Code code, String reason, boolean shortCircuited) {
        List<Classification> out = new ArrayList<>(descriptors.size());
        descriptors.forEach(d -> out.add(new Classification.Unclassified(d, code, reason, shortCircuited)));
        return out;
    }

    /** The call's deadline: the timeout, or FIRST_CONNECT until the service first answered. */
    private long deadlineNanos() {
        long timeout = options.timeout().toNanos();
        return answered ? timeout : Math.max(timeout, FIRST_CONNECT.toNanos());
    }

    /** Whether the breaker is open (calls answer Unclassified without trying the service). */
    public boolean circuitOpen() {
        return breaker != null && breaker.isOpen();
    }

    /** Is the service back? The prober asks, on its own thread, with a cheap call. */
    private boolean probe() {
        try {
            stub.withDeadlineAfter(deadlineNanos(), TimeUnit.NANOSECONDS).getRuleset(GetRulesetRequest.getDefaultInstance());
            return true;
        } catch (StatusRuntimeException e) {
            return false;
        }
    }

    /**
     * The field violations of a refused descriptor: the google.rpc.BadRequest detail of the
     * status (trailer {@code grpc-status-details-bin}), else the status message as one.
     */
    static List<InvalidDescriptorException.FieldViolation> violations(StatusRuntimeException e) {
        List<InvalidDescriptorException.FieldViolation> out = new ArrayList<>();
        Metadata trailers = e.getTrailers();
        byte[] details = trailers == null ? null : trailers.get(STATUS_DETAILS);
        if (details != null) {
            try {
                for (Any detail : com.google.rpc.Status.parseFrom(details).getDetailsList()) {
                    if (detail.getTypeUrl().equals(TYPE_PREFIX + "google.rpc.BadRequest")) {
                        for (BadRequest.FieldViolation v : BadRequest.parseFrom(detail.getValue()).getFieldViolationsList()) {
                            out.add(new InvalidDescriptorException.FieldViolation(v.getField(), v.getDescription()));
                        }
                    }
                }
            } catch (InvalidProtocolBufferException ex) {
                out.clear();
            }
        }
        if (out.isEmpty()) {
            String description = e.getStatus().getDescription();
            out.add(new InvalidDescriptorException.FieldViolation("", description == null ? "" : description));
        }
        return out;
    }

    @Override
    public void close() {
        if (prober != null) {
            prober.close();
        }
        if (ownsChannel) {
            channel.shutdown();
            try {
                if (!channel.awaitTermination(2, TimeUnit.SECONDS)) {
                    channel.shutdownNow();
                }
            } catch (InterruptedException e) {
                channel.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
    }
}
