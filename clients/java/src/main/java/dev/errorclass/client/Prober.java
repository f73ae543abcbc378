package dev.errorclass.client;

import java.util.function.BooleanSupplier;

/**
 * Runs an open {@link Breaker}'s probes on a daemon thread of its own, so that no caller waits
 * for one: it sleeps {@link Breaker#probeWait()}, asks the service ({@code probe}, a cheap call
 * with the client's deadline) and tells the breaker, until a probe succeeds, the client
 * closes, or {@link #MAX_PROBES} (at 30 s apart, days) have been made.
 */
final class Prober implements AutoCloseable {
    static final int MAX_PROBES = 10_000;

    private final Breaker breaker;
    private final BooleanSupplier probe;
    private final Object lock = new Object();
    private Thread thread;
    private boolean closed;

    Prober(Breaker breaker, BooleanSupplier probe) {
        this.breaker = breaker;
        this.probe = probe;
    }

    /** The breaker has just opened: probe until it closes. */
    void start() {
        synchronized (lock) {
            if (closed || thread != null) {
                return; // the running prober goes on while the breaker is open
            }
            thread = new Thread(this::run, "errorclass-breaker-probe");
            thread.setDaemon(true);
            thread.start();
        }
    }

    private void run() {
        for (int probes = 0; ; probes++) {
            synchronized (lock) {
                // decided under the lock start() takes: a breaker that opens again after this
                // finds either this thread still going or none, never one about to end
                if (closed || !breaker.isOpen() || probes == MAX_PROBES) {
                    thread = null;
                    return;
                }
            }
            try {
                Thread.sleep(breaker.probeWait().toMillis());
            } catch (InterruptedException e) {
                return;
            }
            boolean ok;
            try {
                ok = probe.getAsBoolean();
            } catch (RuntimeException e) {
                ok = false;
            }
            breaker.probed(ok);
        }
    }

    /** Stop probing (the client is closing). */
    @Override
    public void close() {
        Thread t;
        synchronized (lock) {
            closed = true;
            t = thread;
        }
        if (t != null) {
            t.interrupt();
        }
    }
}
