package dev.errorclass.client;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import dev.errorclass.v1.ClassifyRequest;
import dev.errorclass.v1.ErrorClassifierGrpc;
import dev.errorclass.v1.ExceptionDescriptor;
import dev.errorclass.v1.GetRulesetRequest;
import dev.errorclass.v1.Origin;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A client of the classifier service.
 *
 * <pre>{@code
 * try (ClassifierClient client = ClassifierClient.connect("classifier.internal:50051")) {
 *     Classification c = client.classify(e, Origin.ORIGIN_PROVIDER, "openai");
 * }
 * }</pre>
 *
 * <ul>
 *   <li><b>Deadline</b>: every call has one ({@link Options#timeout}, 250 ms by default, as the
 *       Python client): a loopback or in-cluster call answers in about a millisecond. Until the
 *       channel has first been READY, a call may wait up to {@link #FIRST_CONNECT} instead: a
 *       JVM's first call loads gRPC and Netty and opens the connection, which took over a second
 *       on a loaded 2-core machine (the README test), and would otherwise answer Unclassified
 *       and open the breaker on a healthy service. A refused connection still fails at once.
 *   <li><b>Retries</b>: the one default of every client: UNAVAILABLE is retried by gRPC's own
 *       retry policy ({@link Options#attempts}, 3 tries, 50 ms backoff doubling), within the
 *       call's deadline and under gRPC's retry throttling, so an outage causes no retry storm.
 *       Classifying is a pure function of the descriptor, so a retry is safe.
 *   <li><b>Breaker</b>: the Python client's (see {@link Breaker}): three service failures in a
 *       row, or one DEADLINE_EXCEEDED, open it; then calls answer {@link
 *       Classification.Unclassified} at once until a background probe finds the service back.
 *   <li><b>When the service cannot answer</b>: {@link Classification.Unclassified}, keeping the
 *       descriptor, never Unknown.
 *   <li><b>A refused descriptor</b>: INVALID_ARGUMENT raises {@link InvalidDescriptorException}
 *       with the server's field violations.
 * </ul>
 */
public final class ClassifierClient implements AutoCloseable {
    private static final String SERVICE = "errorclass.v1.ErrorClassifier";
    private static final Metadata.Key<byte[]> STATUS_DETAILS =
            Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);
    private static final String BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest";

    /** How a client calls: the deadline, the tries on UNAVAILABLE, and the breaker. */
    public record Options(Duration timeout, int attempts, boolean breaker) {
        /** 250 ms, 3 tries, the breaker on: the Python client's defaults. */
        public static final Options DEFAULTS = new Options(Duration.ofMillis(250), 3, true);

        public Options {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive");
            }
            if (attempts < 1) {
                throw new IllegalArgumentException("attempts must be at least 1");
            }
        }

        public Options withTimeout(Duration t) {
            return new Options(t, attempts, breaker);
        }

        public Options withAttempts(int n) {
            return new Options(timeout, n, breaker);
        }

        public Options withBreaker(boolean on) {
            return new Options(timeout, attempts, on);
        }
    }

    private final ManagedChannel channel;
    private final boolean ownsChannel;
    private final Options options;
    private final ErrorClassifierGrpc.ErrorClassifierBlockingStub stub;
    private final Breaker breaker;
    private volatile boolean connected;

    /** The longest a call waits while the channel has never been READY (see the class comment). */
    public static final Duration FIRST_CONNECT = Duration.ofSeconds(5);

    private ClassifierClient(ManagedChannel channel, boolean ownsChannel, Options options) {
        this.channel = channel;
        this.ownsChannel = ownsChannel;
        this.options = options;
        this.stub = ErrorClassifierGrpc.newBlockingStub(channel);
        this.breaker = options.breaker()
                ? new Breaker(this::probe, Breaker.DEFAULT_FAILURES, Breaker.DEFAULT_RESET, Breaker.MAX_RESET)
                : null;
    }

    /** A plaintext channel to {@code target} (host:port) with the default options. */
    public static ClassifierClient connect(String target) {
        return connect(target, Options.DEFAULTS);
    }

    /** A plaintext channel to {@code target} (host:port). */
    public static ClassifierClient connect(String target, Options options) {
        ManagedChannelBuilder<?> builder = ManagedChannelBuilder.forTarget(target).usePlaintext();
        if (options.attempts() > 1) {
            builder.defaultServiceConfig(serviceConfig(options.attempts())).enableRetry();
        } else {
            builder.disableRetry();
        }
        ManagedChannel channel = builder.build();
        channel.getState(true); // connect now: the first classify should not pay for the handshake
        return new ClassifierClient(channel, true, options);
    }

    /**
     * A client over a channel the application built (TLS, another transport, interceptors);
     * the application keeps and closes it.
     */
    public static ClassifierClient over(ManagedChannel channel, Options options) {
        return new ClassifierClient(channel, false, options);
    }

    /** The service config that retries UNAVAILABLE, as the Python client's. */
    static Map<String, Object> serviceConfig(int attempts) {
        Map<String, Object> retry = Map.of(
                "maxAttempts", (double) attempts,
                "initialBackoff", "0.05s",
                "maxBackoff", "1s",
                "backoffMultiplier", 2.0,
                "retryableStatusCodes", List.of("UNAVAILABLE"));
        Map<String, Object> method = Map.of("name", List.of(Map.of("service", SERVICE)), "retryPolicy", retry);
        return Map.of("methodConfig", List.of(method));
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
        if (breaker != null && !breaker.allow()) {
            return new Classification.Unclassified(descriptor, Status.Code.UNAVAILABLE,
                    "circuit open: the service kept failing; not called (probing in the background)", true);
        }
        try {
            var response = stub.withDeadlineAfter(deadlineNanos(), TimeUnit.NANOSECONDS)
                    .classify(ClassifyRequest.newBuilder().setDescriptor(descriptor).build());
            if (breaker != null) {
                breaker.succeeded();
            }
            connected = true;
            return new Classification.Classified(descriptor, response);
        } catch (StatusRuntimeException e) {
            Status status = e.getStatus();
            if (status.getCode() == Status.Code.INVALID_ARGUMENT) {
                List<InvalidDescriptorException.FieldViolation> violations = violations(e);
                if (violations.isEmpty()) {
                    violations = List.of(new InvalidDescriptorException.FieldViolation(
                            "", status.getDescription() == null ? "" : status.getDescription()));
                }
                throw new InvalidDescriptorException(violations);
            }
            if (breaker != null) {
                breaker.failed(status.getCode());
            }
            String reason = status.getCode() + (status.getDescription() == null ? "" : ": " + status.getDescription());
            return new Classification.Unclassified(descriptor, status.getCode(), reason, false);
        }
    }

    /** The call's deadline: the per-call timeout, or FIRST_CONNECT until the channel was first READY. */
    private long deadlineNanos() {
        if (!connected && channel.getState(false) == io.grpc.ConnectivityState.READY) {
            connected = true;
        }
        long timeout = options.timeout().toNanos();
        return connected ? timeout : Math.max(timeout, FIRST_CONNECT.toNanos());
    }

    /** Whether the breaker is open (calls answer Unclassified without trying the service). */
    public boolean circuitOpen() {
        return breaker != null && breaker.isOpen();
    }

    private boolean probe() {
        try {
            stub.withDeadlineAfter(deadlineNanos(), TimeUnit.NANOSECONDS)
                    .getRuleset(GetRulesetRequest.getDefaultInstance());
            return true;
        } catch (StatusRuntimeException e) {
            return false;
        }
    }

    /** The BadRequest field violations of the status details (google.rpc.Status, decoded by hand: lite has no google.rpc). */
    static List<InvalidDescriptorException.FieldViolation> violations(StatusRuntimeException e) {
        Metadata trailers = e.getTrailers();
        byte[] details = trailers == null ? null : trailers.get(STATUS_DETAILS);
        List<InvalidDescriptorException.FieldViolation> out = new ArrayList<>();
        if (details == null) {
            return out;
        }
        try {
            for (ByteString any : repeated(ByteString.copyFrom(details), 3)) {
                List<ByteString> url = repeated(any, 1);
                if (url.isEmpty() || !url.get(0).toStringUtf8().equals(BAD_REQUEST)) {
                    continue;
                }
                for (ByteString value : repeated(any, 2)) {
                    for (ByteString v : repeated(value, 1)) {
                        List<ByteString> field = repeated(v, 1);
                        List<ByteString> description = repeated(v, 2);
                        out.add(new InvalidDescriptorException.FieldViolation(
                                field.isEmpty() ? "" : field.get(0).toStringUtf8(),
                                description.isEmpty() ? "" : description.get(0).toStringUtf8()));
                    }
                }
            }
        } catch (IOException ex) {
            out.clear();
        }
        return out;
    }

    /** Every length-delimited value of field {@code number} in a message. */
    private static List<ByteString> repeated(ByteString message, int number) throws IOException {
        CodedInputStream in = message.newCodedInput();
        List<ByteString> out = new ArrayList<>();
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            if (tag == ((number << 3) | 2)) {
                out.add(in.readBytes());
            } else if (!in.skipField(tag)) {
                break;
            }
        }
        return out;
    }

    @Override
    public void close() {
        if (breaker != null) {
            breaker.close();
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
