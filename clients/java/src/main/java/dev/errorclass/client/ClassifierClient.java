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
import java.io.IOException;
import java.nio.file.Path;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
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
 *   <li><b>A bundle</b> ({@link Options#withTrustedKeyFiles}, {@link Options#withBundleFile}): the
 *       serving ruleset in process, verified with the trusted keys (a refused one is recorded and
 *       the one in use stays), fetched at start and whenever the service names another ({@code
 *       BundleSource}); it answers when the service cannot, marked {@link
 *       Classification.Classified#local() local}, or every call in {@link Mode#LOCAL_FIRST},
 *       whose decisions are reported to the service in batches ({@code DecisionReporter}). Its
 *       work runs on one daemon thread of the client's.
 * </ul>
 */
public final class ClassifierClient implements AutoCloseable {
    private static final Metadata.Key<byte[]> STATUS_DETAILS =
            Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);
    private static final String TYPE_PREFIX = "type.googleapis.com/";

    /** Where answers come from: the service (with the bundle as a fallback), or the bundle first. */
    public enum Mode {
        /**
         * The service answers; when it cannot (down, breaker open, deadline, UNAVAILABLE) and a
         * bundle is loaded, the bundle does, the answer marked {@link Classification.Classified#local() local}.
         */
        REMOTE,
        /**
         * The bundle answers in process (no call per failure) and the decisions are reported to
         * the service in batches (ReportDecisions); until a bundle is loaded, the service answers.
         */
        LOCAL_FIRST
    }

    /**
     * How a client calls (the deadline, the tries on UNAVAILABLE, the breaker) and where its
     * answers come from when not from the service (a bundle: the file it starts from, the keys it
     * trusts, whether it fetches the serving one; local-first and its reports).
     *
     * <pre>{@code
     * ClassifierClient.connect(target, Options.DEFAULTS.withTimeout(Duration.ofMillis(100)).withBreaker(false))
     * ClassifierClient.connect(target, Options.DEFAULTS
     *         .withTrustedKeyFiles(List.of(Path.of("ops-2026.pub")))   // fetches the serving bundle, verified
     *         .withBundleFile(Path.of("rules.bundle.json")))           // and starts from this one
     * }</pre>
     *
     * @param timeout each call's deadline
     * @param attempts tries per call on UNAVAILABLE (gRPC's retry policy)
     * @param breaker whether the breaker is on
     * @param mode {@link Mode#REMOTE} (the default) or {@link Mode#LOCAL_FIRST}
     * @param bundleFile a bundle to start from (null: none); refused at construction when the
     *     trusted keys refuse it
     * @param signaturesFile its signatures (null: {@code <bundleFile>.sig.json}; none there: unsigned)
     * @param trustedKeys the Ed25519 public keys a bundle must be signed by (several, to rotate)
     * @param allowUnsigned without trusted keys, whether a bundle is used at all (unverified);
     *     with trusted keys it changes nothing: an unsigned bundle is refused
     * @param fetchBundle whether to fetch the serving bundle (GetBundle); null: when a bundle
     *     can be used (a bundle file, trusted keys or unsigned allowed) or the mode is local-first
     * @param reportBatch local decisions per report, and how many pending send one at once
     * @param reportInterval how often whatever is pending is reported
     * @param reportQueue the most decisions kept pending; past it the oldest are dropped (counted)
     */
    public record Options(Duration timeout, int attempts, boolean breaker, Mode mode, Path bundleFile, Path signaturesFile,
            List<PublicKey> trustedKeys, boolean allowUnsigned, Boolean fetchBundle, int reportBatch, Duration reportInterval,
            int reportQueue) {
        /** Decisions per report by default. */
        public static final int REPORT_BATCH = 100;
        /** How often pending decisions are reported by default. */
        public static final Duration REPORT_INTERVAL = Duration.ofSeconds(1);
        /** The most decisions kept pending by default. */
        public static final int REPORT_QUEUE = 10_000;

        /**
         * {@link Facts#DEADLINE_MS}, {@link Facts#ATTEMPTS} tries, the breaker on, remote, no
         * bundle: every client's defaults.
         */
        public static final Options DEFAULTS = new Options(Duration.ofMillis(Facts.DEADLINE_MS), Facts.ATTEMPTS, true);

        public Options {
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive, not " + timeout);
            }
            if (attempts < 1) {
                throw new IllegalArgumentException("attempts must be at least 1, not " + attempts);
            }
            if (mode == null) {
                throw new IllegalArgumentException("mode is REMOTE or LOCAL_FIRST, not null");
            }
            trustedKeys = trustedKeys == null ? List.of() : List.copyOf(trustedKeys);
            if (reportBatch < 1 || reportBatch > Facts.MAX_BATCH) {
                throw new IllegalArgumentException("reportBatch must be 1 to " + Facts.MAX_BATCH + ", not " + reportBatch);
            }
            if (reportInterval == null || reportInterval.isNegative() || reportInterval.isZero()) {
                throw new IllegalArgumentException("reportInterval must be positive, not " + reportInterval);
            }
            if (reportQueue < reportBatch) {
                throw new IllegalArgumentException("reportQueue must hold a batch (" + reportBatch + "), not " + reportQueue);
            }
        }

        /** The deadline, tries and breaker; remote, no bundle. */
        public Options(Duration timeout, int attempts, boolean breaker) {
            this(timeout, attempts, breaker, Mode.REMOTE, null, null, List.of(), false, null, REPORT_BATCH, REPORT_INTERVAL,
                    REPORT_QUEUE);
        }

        public Options withTimeout(Duration t) {
            return new Options(t, attempts, breaker, mode, bundleFile, signaturesFile, trustedKeys, allowUnsigned, fetchBundle,
                    reportBatch, reportInterval, reportQueue);
        }

        /** Tries per call on UNAVAILABLE; 1 turns gRPC's retries off. */
        public Options withAttempts(int n) {
            return new Options(timeout, n, breaker, mode, bundleFile, signaturesFile, trustedKeys, allowUnsigned, fetchBundle,
                    reportBatch, reportInterval, reportQueue);
        }

        public Options withBreaker(boolean on) {
            return new Options(timeout, attempts, on, mode, bundleFile, signaturesFile, trustedKeys, allowUnsigned, fetchBundle,
                    reportBatch, reportInterval, reportQueue);
        }

        public Options withMode(Mode m) {
            return new Options(timeout, attempts, breaker, m, bundleFile, signaturesFile, trustedKeys, allowUnsigned, fetchBundle,
                    reportBatch, reportInterval, reportQueue);
        }

        /** Start from this bundle file, its signatures beside it ({@code FILE.sig.json}). */
        public Options withBundleFile(Path file) {
            return withBundleFile(file, null);
        }

        /** Start from this bundle file, with its signatures file ({@code null}: {@code FILE.sig.json}). */
        public Options withBundleFile(Path file, Path signatures) {
            return new Options(timeout, attempts, breaker, mode, file, signatures, trustedKeys, allowUnsigned, fetchBundle,
                    reportBatch, reportInterval, reportQueue);
        }

        /** Trust bundles signed by any of these keys ({@link Bundle#publicKey}). */
        public Options withTrustedKeys(List<PublicKey> keys) {
            return new Options(timeout, attempts, breaker, mode, bundleFile, signaturesFile, keys, allowUnsigned, fetchBundle,
                    reportBatch, reportInterval, reportQueue);
        }

        /**
         * Trust bundles signed by any of the keys in these PEM files ({@code classifier bundle
         * keygen}'s {@code .pub}); read now: a file that cannot be read is a {@link
         * BundleException} {@code unreadable_file}, one that holds no Ed25519 public key {@code invalid_key}.
         */
        public Options withTrustedKeyFiles(List<Path> pemFiles) {
            List<PublicKey> keys = new ArrayList<>();
            for (Path p : pemFiles) {
                try {
                    keys.add(Bundle.publicKey(p));
                } catch (IOException e) {
                    throw new BundleException("unreadable_file", p + ": " + e);
                } catch (BundleException e) {
                    throw new BundleException(e.code(), p + ": " + e.getMessage().substring(e.code().length() + 2));
                }
            }
            return withTrustedKeys(keys);
        }

        /** Without trusted keys, use a bundle unverified (explicitly: the default refuses it). */
        public Options withAllowUnsigned(boolean allow) {
            return new Options(timeout, attempts, breaker, mode, bundleFile, signaturesFile, trustedKeys, allow, fetchBundle,
                    reportBatch, reportInterval, reportQueue);
        }

        /** Whether to fetch the serving bundle with GetBundle (and refresh it). */
        public Options withFetchBundle(boolean fetch) {
            return new Options(timeout, attempts, breaker, mode, bundleFile, signaturesFile, trustedKeys, allowUnsigned, fetch,
                    reportBatch, reportInterval, reportQueue);
        }

        /** Report local decisions in batches of {@code batch}, every {@code interval}, keeping at most {@code queue} pending. */
        public Options withReports(int batch, Duration interval, int queue) {
            return new Options(timeout, attempts, breaker, mode, bundleFile, signaturesFile, trustedKeys, allowUnsigned, fetchBundle,
                    batch, interval, queue);
        }

        /** Whether a bundle may answer: one to start from, keys to check one with, or unsigned allowed. */
        public boolean usesBundle() {
            return bundleFile != null || !trustedKeys.isEmpty() || allowUnsigned || mode == Mode.LOCAL_FIRST;
        }

        /** {@link #fetchBundle()}, its default resolved. */
        public boolean fetchesBundle() {
            return fetchBundle != null ? fetchBundle : usesBundle();
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
    private final Clock clock = Clock.systemUTC();
    /** The client's own daemon thread (fetches, reports); null when no bundle is configured. */
    private final ScheduledExecutorService background;
    private final BundleSource source;
    private final DecisionReporter reporter;

    private ClassifierClient(ManagedChannel channel, boolean ownsChannel, Options options) {
        this.channel = channel;
        this.ownsChannel = ownsChannel;
        this.options = options;
        this.stub = ErrorClassifierGrpc.newBlockingStub(channel);
        this.breaker = options.breaker() ? new Breaker() : null;
        this.prober = options.breaker() ? new Prober(breaker, this::probe) : null;
        if (!options.usesBundle() && !options.fetchesBundle()) {
            this.background = null;
            this.source = null;
            this.reporter = null;
            return;
        }
        this.background = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "errorclass-client-bundle");
            t.setDaemon(true);
            return t;
        });
        try {
            this.source = new BundleSource(options.trustedKeys(), options.allowUnsigned(), options.fetchesBundle(), stub,
                    this::deadlineNanos, this::answered, background);
            if (options.bundleFile() != null) {
                source.start(options.bundleFile(), options.signaturesFile());
            }
            this.reporter = new DecisionReporter(stub, this::deadlineNanos, this::circuitOpen, source::sawBundle, this::answered,
                    background, options.reportBatch(), options.reportInterval(), options.reportQueue());
        } catch (RuntimeException e) {
            background.shutdownNow();
            throw e;
        }
        source.startFetching();
    }

    private void answered() {
        answered = true;
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
        try {
            return new ClassifierClient(channel, true, options);
        } catch (RuntimeException e) {
            channel.shutdownNow();
            throw e;
        }
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
        Bundle local = localFirst();
        if (local != null) {
            return decided(local, descriptor);
        }
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
        Bundle local = localFirst();
        if (local != null) {
            List<Classification> out = new ArrayList<>(descriptors.size());
            descriptors.forEach(d -> out.add(decided(local, d)));
            return out;
        }
        ClassifyBatchRequest.Builder request = ClassifyBatchRequest.newBuilder();
        descriptors.forEach(d -> request.addRequests(ClassifyRequest.newBuilder().setDescriptor(d)));
        return call(descriptors, () -> stub.withDeadlineAfter(deadlineNanos(), TimeUnit.NANOSECONDS)
                .classifyBatch(request.build()).getResponsesList());
    }

    /** In local-first mode, the bundle to answer from; null when the service answers. */
    private Bundle localFirst() {
        return options.mode() == Mode.LOCAL_FIRST && source != null ? source.current() : null;
    }

    /** The bundle's answer, queued to be reported. */
    private Classification.Classified decided(Bundle bundle, ExceptionDescriptor descriptor) {
        Classification.Classified c = bundle.classify(descriptor, clock);
        reporter.add(c, clock.instant());
        return c;
    }

    /** The service could not answer: the bundle's answers when one is loaded, else each Unclassified. */
    private List<Classification> fallback(List<ExceptionDescriptor> descriptors, Status.Code code, String reason,
            boolean shortCircuited) {
        Bundle bundle = source == null ? null : source.current();
        if (bundle == null) {
            return unclassified(descriptors, code, reason, shortCircuited);
        }
        List<Classification> out = new ArrayList<>(descriptors.size());
        descriptors.forEach(d -> out.add(decided(bundle, d)));
        return out;
    }

    /** One call through the breaker: the answers, or (the service could not answer) the fallback's. */
    private List<Classification> call(List<ExceptionDescriptor> descriptors, Supplier<List<ClassifyResponse>> send) {
        if (breaker != null && !breaker.allow()) {
            return fallback(descriptors, Status.Code.UNAVAILABLE,
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
            return fallback(descriptors, status.getCode(), reason, false);
        }
        if (breaker != null) {
            breaker.succeeded();
        }
        answered = true;
        if (source != null && !responses.isEmpty()) {
            source.sawRuleset(responses.get(0).getRulesetDigest());
        }
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

    /** The bundle answers come from when not from the service; empty before one was loaded or fetched. */
    public Optional<Bundle> bundle() {
        return Optional.ofNullable(source == null ? null : source.current());
    }

    /** How many bundles were refused (fetched or loaded with {@link #loadBundle}) since the client started. */
    public long bundleRefusals() {
        return source == null ? 0 : source.refusals();
    }

    /** The last refusal, with its stable {@link BundleException#code()}; empty when none was refused. */
    public Optional<BundleException> lastBundleRefusal() {
        return Optional.ofNullable(source == null ? null : source.lastRefusal());
    }

    /**
     * Fetch the serving bundle now, on this thread, within the call's deadline ({@code
     * if_none_match}: the bundle in use), and use it when the trusted keys accept it: whether the
     * bundle in use changed. Throws the {@link BundleException} of a refused bundle (recorded; the
     * bundle in use stays), and the {@link StatusRuntimeException} of a call that failed
     * (FAILED_PRECONDITION: the service serves no bundle). Works whether or not the client fetches
     * on its own.
     */
    public boolean refreshBundle() {
        return requireSource().fetchNow();
    }

    /**
     * Use this bundle file from now on (its signatures: {@code null} for {@code FILE.sig.json}),
     * when the trusted keys accept it; else throw its {@link BundleException} (recorded; the
     * bundle in use stays).
     */
    public Bundle loadBundle(Path file, Path signatures) {
        return requireSource().load(file, signatures);
    }

    /**
     * Wait, at most {@code timeout}, for the start fetch to be done (whatever came of it): for a
     * program that wants the serving bundle before its first classify. True when it is done.
     */
    public boolean awaitBundleFetch(Duration timeout) throws InterruptedException {
        return source == null || source.awaitStartFetch(timeout.toNanos());
    }

    /** Local decisions waiting to be reported. */
    public int pendingDecisions() {
        return reporter == null ? 0 : reporter.pending();
    }

    /** Local decisions the service has taken. */
    public long reportedDecisions() {
        return reporter == null ? 0 : reporter.reported();
    }

    /** Local decisions dropped unreported: the queue was full, or the service refused their report as malformed. */
    public long droppedDecisions() {
        return reporter == null ? 0 : reporter.dropped();
    }

    /**
     * Report every pending local decision now, on this thread, within the call's deadline: how
     * many were reported. Throws the {@link StatusRuntimeException} of a report that failed (what
     * was not reported stays pending).
     */
    public int flushDecisions() {
        return reporter == null ? 0 : reporter.flush(System.nanoTime() + deadlineNanos());
    }

    /** GetBundle calls the service answered {@code unchanged} (no bytes), for the tests. */
    long unchangedBundleFetches() {
        return source == null ? 0 : source.unchangedFetches();
    }

    private BundleSource requireSource() {
        if (source == null) {
            throw new IllegalStateException("this client has no bundle: give it trusted keys, a bundle file, "
                    + "unsigned bundles allowed, or the local-first mode");
        }
        return source;
    }

    /**
     * Report what is pending (within one deadline; what is left is dropped), stop the
     * background threads, and close the channel this client opened.
     */
    @Override
    public void close() {
        if (source != null) {
            source.close();
            reporter.stop();
            try {
                reporter.flush(System.nanoTime() + deadlineNanos());
            } catch (RuntimeException e) {
                // the service is out: what is pending is lost with the process
            }
            background.shutdownNow();
        }
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
