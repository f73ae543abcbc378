package dev.errorclass.client;

import dev.errorclass.v1.ErrorClassifierGrpc;
import dev.errorclass.v1.GetBundleRequest;
import dev.errorclass.v1.GetBundleResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * The bundle a client answers from when it answers in process, and where it comes from: a file
 * shipped with the runtime, then the service (GetBundle), each checked against the trusted keys
 * before it is used; a refused one is recorded and the bundle in use stays in use.
 *
 * <p>Fetching: once at start, in the background, and again whenever the service names a ruleset
 * ({@link #sawRuleset}, an answer's digest) or a bundle ({@link #sawBundle}, a ReportDecisions
 * response) other than the one in use, asking with {@code if_none_match} so that an unchanged
 * bundle costs a few bytes. At most one fetch is in flight. A fetch that fails (the service
 * cannot answer, or serves no bundle) is retried on its own after {@link #FIRST_BACKOFF},
 * doubling up to {@link #MAX_BACKOFF}, and no trigger fetches sooner; a bundle that is refused is
 * not fetched again until the service names another one (its digest is remembered), so a
 * refused bundle is counted once, not once a minute.
 */
final class BundleSource {
    static final long FIRST_BACKOFF = TimeUnit.SECONDS.toNanos(2);
    static final long MAX_BACKOFF = TimeUnit.SECONDS.toNanos(60);

    private final List<PublicKey> trustedKeys;
    private final boolean allowUnsigned;
    private final boolean fetch;
    private final ErrorClassifierGrpc.ErrorClassifierBlockingStub stub;
    private final LongSupplier deadlineNanos;
    private final Runnable answered;
    private final ScheduledExecutorService executor;

    private volatile Bundle current;
    private final AtomicLong refusals = new AtomicLong();
    private volatile BundleException lastRefusal;
    private volatile String refusedBundle = "";
    private volatile String refusedRuleset = "";

    private final ReentrantLock fetching = new ReentrantLock();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final AtomicLong fetches = new AtomicLong();
    private final AtomicLong unchanged = new AtomicLong();
    private final AtomicLong attempts = new AtomicLong();
    private final Object startLock = new Object();
    private boolean started;
    private volatile long notBefore;
    private long backoff;
    private volatile boolean closed;

    BundleSource(List<PublicKey> trustedKeys, boolean allowUnsigned, boolean fetch,
            ErrorClassifierGrpc.ErrorClassifierBlockingStub stub, LongSupplier deadlineNanos, Runnable answered,
            ScheduledExecutorService executor) {
        this.trustedKeys = List.copyOf(trustedKeys);
        this.allowUnsigned = allowUnsigned;
        this.fetch = fetch;
        this.stub = stub;
        this.deadlineNanos = deadlineNanos;
        this.answered = answered;
        this.executor = executor;
    }

    /** The bundle in use; null before one was loaded or fetched. */
    Bundle current() {
        return current;
    }

    long refusals() {
        return refusals.get();
    }

    BundleException lastRefusal() {
        return lastRefusal;
    }

    /** GetBundle calls that answered, and how many of them said {@code unchanged} (no bytes). */
    long fetches() {
        return fetches.get();
    }

    long unchangedFetches() {
        return unchanged.get();
    }

    /**
     * A bundle's bytes, checked as the options say: with trusted keys, a trusted key's signature
     * must verify; without, the bundle is used only when unsigned bundles are allowed.
     */
    Bundle verified(byte[] data, byte[] signatures) {
        if (!trustedKeys.isEmpty()) {
            return Bundle.fromBytes(data, signatures, trustedKeys);
        }
        if (!allowUnsigned) {
            try {
                BundleSignatures.verify(data, signatures, List.of());
            } catch (BundleException e) {
                throw new BundleException(e.code(), e.getMessage().substring(e.code().length() + 2)
                        + " (no key is trusted: give the client trusted keys, or allow unsigned bundles)");
            }
        }
        return Bundle.fromBytes(data, null, List.of());
    }

    /**
     * A bundle file and its signatures file ({@code null}: {@code FILE.sig.json}; absent:
     * none), checked; a file that cannot be read is {@code unreadable_file}.
     */
    Bundle verifiedFile(Path file, Path signatures) {
        Path sig = signatures != null ? signatures : Path.of(file + ".sig.json");
        byte[] data = read(file);
        byte[] signed = null;
        if (!trustedKeys.isEmpty() || !allowUnsigned) {
            if (signatures != null || Files.exists(sig)) {
                signed = read(sig);
            }
        }
        return verified(data, signed);
    }

    private static byte[] read(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new BundleException("unreadable_file", file + ": no such file");
        } catch (IOException e) {
            throw new BundleException("unreadable_file", file + ": " + e);
        }
    }

    /** Start from a file (construction: a refusal is the caller's error, not recorded). */
    void start(Path file, Path signatures) {
        current = verifiedFile(file, signatures);
    }

    /** Swap in a bundle file, or record its refusal and keep the one in use. */
    Bundle load(Path file, Path signatures) {
        Bundle b;
        try {
            b = verifiedFile(file, signatures);
        } catch (BundleException e) {
            refused(e);
            throw e;
        }
        current = b;
        return b;
    }

    private void refused(BundleException e) {
        refusals.incrementAndGet();
        lastRefusal = e;
    }

    /**
     * Ask the service now, on this thread, within the client's deadline: whether the bundle in
     * use changed. Throws the call's StatusRuntimeException when the service cannot answer (or
     * serves no bundle: FAILED_PRECONDITION), and the BundleException of a refused bundle (recorded).
     */
    boolean fetchNow() {
        try {
            if (!fetching.tryLock(deadlineNanos.getAsLong(), TimeUnit.NANOSECONDS)) {
                throw new StatusRuntimeException(Status.DEADLINE_EXCEEDED.withDescription(
                        "GetBundle: the fetch in flight did not end within the deadline"));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StatusRuntimeException(Status.CANCELLED.withDescription("GetBundle: interrupted"));
        }
        try {
            return fetchLocked();
        } finally {
            fetching.unlock();
        }
    }

    private boolean fetchLocked() {
        try {
            return fetchOnce();
        } finally {
            attempts.incrementAndGet();
        }
    }

    private boolean fetchOnce() {
        Bundle have = current;
        GetBundleResponse r = stub.withDeadlineAfter(deadlineNanos.getAsLong(), TimeUnit.NANOSECONDS)
                .getBundle(GetBundleRequest.newBuilder().setIfNoneMatch(have == null ? "" : have.bundleDigest()).build());
        answered.run();
        fetches.incrementAndGet();
        if (r.getUnchanged()) {
            unchanged.incrementAndGet();
            return false;
        }
        Bundle b;
        try {
            b = verified(r.getBundle().toByteArray(), r.getSignatures().isEmpty() ? null : r.getSignatures().toByteArray());
        } catch (BundleException e) {
            refusedBundle = r.getBundleDigest();
            refusedRuleset = r.getRulesetDigest();
            refused(e);
            throw e;
        }
        current = b;
        return have == null || !have.bundleDigest().equals(b.bundleDigest());
    }

    /** The first fetch, in the background (never on a caller's classify). */
    void startFetching() {
        if (fetch) {
            synchronized (startLock) {
                started = true;
            }
            trigger();
        }
    }

    /** An answer from the service named this ruleset: fetch when it is not the one in use. */
    void sawRuleset(String digest) {
        Bundle b = current;
        if (fetch && !digest.isEmpty() && (b == null || !b.digest().equals(digest)) && !digest.equals(refusedRuleset)) {
            trigger();
        }
    }

    /** A ReportDecisions response named the serving bundle: fetch when it is not the one in use. */
    void sawBundle(String bundleDigest) {
        Bundle b = current;
        if (fetch && !bundleDigest.isEmpty() && (b == null || !b.bundleDigest().equals(bundleDigest))
                && !bundleDigest.equals(refusedBundle)) {
            trigger();
        }
    }

    /** A background fetch, unless one is already queued; no sooner than a failure's backoff allows. */
    private void trigger() {
        synchronized (startLock) {
            if (!started) {
                return; // the start fetch comes first
            }
        }
        if (closed || !scheduled.compareAndSet(false, true)) {
            return;
        }
        long delay = Math.max(0, notBefore - System.nanoTime());
        try {
            executor.schedule(this::background, delay, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            scheduled.set(false); // closing
        }
    }

    private void background() {
        scheduled.set(false);
        if (closed || !fetching.tryLock()) {
            return; // one fetch in flight at most; the one going gets the newest bundle
        }
        boolean retry = false;
        try {
            fetchLocked();
            backoff = 0;
            notBefore = 0;
        } catch (BundleException e) {
            failed(); // refused: recorded; fetched again when the service names another bundle
        } catch (RuntimeException e) {
            failed();
            retry = true;
        } finally {
            fetching.unlock();
        }
        if (retry) {
            trigger();
        }
    }

    private void failed() {
        backoff = backoff == 0 ? FIRST_BACKOFF : Math.min(2 * backoff, MAX_BACKOFF);
        notBefore = System.nanoTime() + backoff;
    }

    /**
     * Wait (at most {@code timeoutNanos}) until the start fetch is done, whatever came of it: a
     * program that wants its bundle before its first classify. True when it is.
     */
    boolean awaitStartFetch(long timeoutNanos) throws InterruptedException {
        long end = System.nanoTime() + timeoutNanos;
        while (true) {
            if (!fetch || attempts.get() > 0 && !fetching.isLocked()) {
                return true;
            }
            if (System.nanoTime() >= end) {
                return false;
            }
            Thread.sleep(5);
        }
    }

    void close() {
        closed = true;
    }
}
