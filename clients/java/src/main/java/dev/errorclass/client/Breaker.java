package dev.errorclass.client;

import io.grpc.Status;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * A circuit breaker with the Python client's semantics (classifier/client/breaker.py).
 *
 * <p>The classifier sits on a run's failure path, so a dead or hung service must not make every
 * failed run wait for a deadline. The breaker opens after {@code failures} consecutive failures
 * of the service (UNAVAILABLE, RESOURCE_EXHAUSTED, INTERNAL, UNKNOWN), or at once on
 * DEADLINE_EXCEEDED (a hung server: one wait for the deadline is the most a caller pays). While
 * it is open, calls fail at once without touching the network; a probe, on a daemon thread of
 * its own so that no caller waits for it, asks the service again after {@code resetAfter}
 * (doubling up to {@code maxResetAfter} while it stays down), and the first probe that succeeds
 * closes the breaker.
 */
final class Breaker {
    /** Statuses that say the service, not the request, is the problem. */
    static final Set<Status.Code> TRIPPING = EnumSet.of(
            Status.Code.UNAVAILABLE,
            Status.Code.DEADLINE_EXCEEDED,
            Status.Code.RESOURCE_EXHAUSTED,
            Status.Code.INTERNAL,
            Status.Code.UNKNOWN);
    static final int DEFAULT_FAILURES = 3;
    static final Duration DEFAULT_RESET = Duration.ofSeconds(2);
    static final Duration MAX_RESET = Duration.ofSeconds(30);
    private static final int MAX_PROBES = 10_000;

    private final BooleanSupplier probe;
    private final int threshold;
    private final long resetAfterMillis;
    private final long maxResetAfterMillis;
    private final Object lock = new Object();
    private int consecutive;
    private volatile boolean open;
    private volatile boolean closed;
    private volatile int opened;
    private volatile int probes;
    private Thread prober;

    Breaker(BooleanSupplier probe, int failures, Duration resetAfter, Duration maxResetAfter) {
        if (failures < 1) {
            throw new IllegalArgumentException("failures must be at least 1");
        }
        this.probe = probe;
        this.threshold = failures;
        this.resetAfterMillis = resetAfter.toMillis();
        this.maxResetAfterMillis = maxResetAfter.toMillis();
    }

    boolean allow() {
        return !open;
    }

    boolean isOpen() {
        return open;
    }

    /** How many times the breaker has opened. */
    int opened() {
        return opened;
    }

    int probes() {
        return probes;
    }

    void succeeded() {
        synchronized (lock) {
            consecutive = 0;
        }
    }

    void failed(Status.Code code) {
        if (!TRIPPING.contains(code)) {
            return;
        }
        synchronized (lock) {
            consecutive++;
            boolean trip = code == Status.Code.DEADLINE_EXCEEDED || consecutive >= threshold;
            if (!trip || open || closed) {
                return;
            }
            open = true;
            opened++;
            prober = new Thread(this::probing, "errorclass-breaker");
            prober.setDaemon(true);
            prober.start();
        }
    }

    /** Stop probing (the client is closing). */
    void close() {
        Thread t;
        synchronized (lock) {
            closed = true;
            t = prober;
        }
        if (t != null) {
            t.interrupt();
        }
    }

    private void probing() {
        long wait = resetAfterMillis;
        for (int i = 0; i < MAX_PROBES && !closed; i++) {
            try {
                Thread.sleep(wait);
            } catch (InterruptedException e) {
                return;
            }
            probes++;
            boolean ok;
            try {
                ok = probe.getAsBoolean();
            } catch (RuntimeException e) {
                ok = false;
            }
            if (ok) {
                synchronized (lock) {
                    open = false;
                    consecutive = 0;
                }
                return;
            }
            wait = Math.min(wait * 2, maxResetAfterMillis);
        }
    }
}
