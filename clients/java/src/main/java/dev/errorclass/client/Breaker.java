package dev.errorclass.client;

import io.grpc.Status;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The circuit breaker every errorclass client has, as a state machine with no clock and no
 * thread (clients/spec/vectors/breaker.json drives it event by event; {@link Prober} runs
 * its probes).
 *
 * <p>The classifier sits on a run's failure path, so a dead or hung service must not make
 * every failed run wait for a deadline. It opens after {@link Facts#BREAKER_FAILURES}
 * consecutive failures of the service ({@link Facts#BREAKER_TRIPPING}), or at once on one of
 * {@link Facts#BREAKER_OPENS_AT_ONCE} (a hung server: one deadline is the most a caller pays).
 * A status that is the request's fault neither trips it nor resets the count. While it is
 * open, calls are short-circuited; a probe waits {@link #probeWait()} (from {@link
 * Facts#BREAKER_RESET_MS}, doubling after each failed probe up to {@link
 * Facts#BREAKER_MAX_RESET_MS}, and starting again each time it opens), and the first probe
 * that succeeds closes it.
 */
final class Breaker {
    static final Set<Status.Code> TRIPPING = codes(Facts.BREAKER_TRIPPING);
    static final Set<Status.Code> OPENS_AT_ONCE = codes(Facts.BREAKER_OPENS_AT_ONCE);

    private final int threshold;
    private final long resetMillis;
    private final long maxResetMillis;
    private int consecutive;
    private boolean open;
    private long waitMillis;
    private int opened;

    /** The defaults of facts.json. */
    Breaker() {
        this(Facts.BREAKER_FAILURES, Duration.ofMillis(Facts.BREAKER_RESET_MS), Duration.ofMillis(Facts.BREAKER_MAX_RESET_MS));
    }

    Breaker(int failures, Duration reset, Duration maxReset) {
        if (failures < 1) {
            throw new IllegalArgumentException("failures must be at least 1");
        }
        if (reset.isNegative() || reset.isZero() || maxReset.compareTo(reset) < 0) {
            throw new IllegalArgumentException("the reset wait must be positive and at most the maximum");
        }
        this.threshold = failures;
        this.resetMillis = reset.toMillis();
        this.maxResetMillis = maxReset.toMillis();
        this.waitMillis = resetMillis;
    }

    private static Set<Status.Code> codes(List<String> names) {
        Set<Status.Code> out = EnumSet.noneOf(Status.Code.class);
        names.forEach(n -> out.add(Status.Code.valueOf(n)));
        return out;
    }

    /** Whether a call may go to the service now. */
    synchronized boolean allow() {
        return !open;
    }

    synchronized boolean isOpen() {
        return open;
    }

    /** How many times it has opened. */
    synchronized int opened() {
        return opened;
    }

    /** A call it let through succeeded. */
    synchronized void succeeded() {
        consecutive = 0;
    }

    /** A call it let through failed with {@code code}; true when this failure opened it. */
    synchronized boolean failed(Status.Code code) {
        if (!TRIPPING.contains(code)) {
            return false;
        }
        consecutive++;
        if (open || !(OPENS_AT_ONCE.contains(code) || consecutive >= threshold)) {
            return false;
        }
        open = true;
        opened++;
        waitMillis = resetMillis;
        return true;
    }

    /** How long to wait before the next probe. */
    synchronized Duration probeWait() {
        return Duration.ofMillis(waitMillis);
    }

    /** A probe's outcome: success closes it; a failure doubles the wait before the next. */
    synchronized void probed(boolean ok) {
        if (!open) {
            return;
        }
        if (ok) {
            open = false;
            consecutive = 0;
        } else {
            waitMillis = Math.min(waitMillis * 2, maxResetMillis);
        }
    }
}
