package dev.errorclass.client;

import com.google.protobuf.Timestamp;
import dev.errorclass.v1.ErrorClassifierGrpc;
import dev.errorclass.v1.ReportDecisionsRequest;
import dev.errorclass.v1.ReportDecisionsResponse;
import dev.errorclass.v1.ReportedDecision;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The decisions a client made from its bundle, reported to the service with ReportDecisions so
 * that its decision log, metrics and Unknown inbox still see every failure (docs/bundles.md,
 * "ReportDecisions").
 *
 * <p>Oldest first, in batches: one as soon as {@code batch} decisions are pending, and whatever
 * is pending every {@code interval}, on the client's daemon thread (never a caller's). A batch
 * also stays under the server's request limit ({@link #MAX_REQUEST_BYTES}). The queue holds at
 * most {@code capacity}: when full, the oldest is dropped and counted. A report that fails is
 * kept and sent again with the next batch (after the next interval, not at every new decision);
 * one the service refuses as malformed (INVALID_ARGUMENT: a bug, not an outage) is dropped and
 * counted, so it cannot block the ones behind it. While the breaker is open nothing is sent:
 * the service is known to be out.
 */
final class DecisionReporter {
    /** Under the server's 4 MiB request limit, with room for the request's own framing. */
    static final int MAX_REQUEST_BYTES = 4 * 1024 * 1024 - 64 * 1024;

    private final ErrorClassifierGrpc.ErrorClassifierBlockingStub stub;
    private final LongSupplier deadlineNanos;
    private final BooleanSupplier serviceOut;
    private final Consumer<String> servedBundle;
    private final Runnable answered;
    private final ScheduledExecutorService executor;
    private final int batch;
    private final int capacity;

    private final ArrayDeque<ReportedDecision> queue = new ArrayDeque<>();
    private final Object sending = new Object();
    private long reported;
    private long dropped;
    private boolean kicked;
    private boolean lastFailed;
    private volatile String lastError = "";
    private final ScheduledFuture<?> ticker;

    DecisionReporter(ErrorClassifierGrpc.ErrorClassifierBlockingStub stub, LongSupplier deadlineNanos, BooleanSupplier serviceOut,
            Consumer<String> servedBundle, Runnable answered, ScheduledExecutorService executor, int batch, Duration interval,
            int capacity) {
        this.stub = stub;
        this.deadlineNanos = deadlineNanos;
        this.serviceOut = serviceOut;
        this.servedBundle = servedBundle;
        this.answered = answered;
        this.executor = executor;
        this.batch = batch;
        this.capacity = capacity;
        long every = interval.toNanos();
        this.ticker = executor.scheduleWithFixedDelay(this::tick, every, every, TimeUnit.NANOSECONDS);
    }

    /** A decision made from {@code bundle}: queued, and a batch sent when one is full. */
    void add(Classification.Classified decided, Instant at) {
        ReportedDecision d = ReportedDecision.newBuilder()
                .setDescriptor(decided.descriptor())
                .setAnswer(decided.response())
                .setBundleDigest(decided.bundleDigest())
                .setDecidedAt(Timestamp.newBuilder().setSeconds(at.getEpochSecond()).setNanos(at.getNano()))
                .build();
        boolean kick = false;
        synchronized (queue) {
            if (queue.size() >= capacity) {
                queue.pollFirst();
                dropped++;
            }
            queue.addLast(d);
            if (queue.size() >= batch && !kicked && !lastFailed) {
                kicked = true;
                kick = true;
            }
        }
        if (kick) {
            try {
                executor.execute(this::full);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // closing: close() flushes
            }
        }
    }

    int pending() {
        synchronized (queue) {
            return queue.size();
        }
    }

    long reported() {
        synchronized (queue) {
            return reported;
        }
    }

    long dropped() {
        synchronized (queue) {
            return dropped;
        }
    }

    /** Why the last report failed; empty when it did not. */
    String lastError() {
        return lastError;
    }

    /** Full batches, as many as are full. */
    private void full() {
        synchronized (queue) {
            kicked = false;
        }
        try {
            while (pending() >= batch && sendOne(System.nanoTime() + deadlineNanos.getAsLong()) > 0) {
                // the next full batch
            }
        } catch (RuntimeException e) {
            // kept for the next tick
        }
    }

    /** The interval: everything pending, in batches. */
    private void tick() {
        if (serviceOut.getAsBoolean()) {
            return;
        }
        try {
            long end = System.nanoTime() + deadlineNanos.getAsLong();
            while (pending() > 0 && System.nanoTime() < end && sendOne(end) > 0) {
                // the next batch
            }
        } catch (RuntimeException e) {
            // kept for the next tick
        }
    }

    /**
     * Every pending decision now, on this thread, until none is left or {@code deadlineNanos}
     * (a System.nanoTime) passes: how many were reported. Throws the StatusRuntimeException of
     * a report that failed (the decisions stay queued).
     */
    int flush(long deadlineNanos) {
        int sent = 0;
        while (pending() > 0) {
            if (System.nanoTime() >= deadlineNanos) {
                throw new StatusRuntimeException(Status.DEADLINE_EXCEEDED.withDescription(
                        "flush: " + pending() + " decisions still pending at the deadline"));
            }
            sent += sendOne(deadlineNanos);
        }
        return sent;
    }

    /** One report of the oldest decisions (at most a batch, under the size limit): how many were reported. */
    private int sendOne(long deadline) {
        synchronized (sending) {
            List<ReportedDecision> out = new ArrayList<>();
            synchronized (queue) {
                long bytes = 0;
                for (ReportedDecision d : queue) {
                    int size = d.getSerializedSize() + 8;
                    if (out.size() == Math.min(batch, Facts.MAX_BATCH) || (!out.isEmpty() && bytes + size > MAX_REQUEST_BYTES)) {
                        break;
                    }
                    out.add(d);
                    bytes += size;
                }
            }
            if (out.isEmpty()) {
                return 0;
            }
            long left = Math.max(1, deadline - System.nanoTime());
            ReportDecisionsResponse r;
            try {
                r = stub.withDeadlineAfter(left, TimeUnit.NANOSECONDS)
                        .reportDecisions(ReportDecisionsRequest.newBuilder().addAllDecisions(out).build());
            } catch (StatusRuntimeException e) {
                lastError = e.getStatus().getCode() + ": " + e.getStatus().getDescription();
                boolean refused = e.getStatus().getCode() == Status.Code.INVALID_ARGUMENT;
                synchronized (queue) {
                    lastFailed = !refused;
                    if (refused) {
                        dropped += removeSent(out);
                    }
                }
                throw e;
            }
            answered.run();
            lastError = "";
            synchronized (queue) {
                lastFailed = false;
                removeSent(out);
                reported += out.size();
            }
            servedBundle.accept(r.getBundleDigest());
            return out.size();
        }
    }

    /** Take the sent decisions off the head of the queue (those dropped meanwhile are gone already): how many were there. */
    private int removeSent(List<ReportedDecision> sent) {
        int n = 0;
        for (ReportedDecision d : sent) {
            if (queue.peekFirst() == d) {
                queue.pollFirst();
                n++;
            }
        }
        return n;
    }

    /** Stop the interval's reports (close flushes what is left, on the caller's thread). */
    void stop() {
        ticker.cancel(false);
    }
}
