package dev.errorclass.conformance;

import java.util.List;

/**
 * The Java pairs of the runtime suite (tests/conformance/runtime), JDK only, so that
 * {@code java RuntimeList.java --list} answers without the worker built
 * (tests/conformance/runtime/drivers/java.py lists them at pytest collection).
 */
public final class RuntimeList {
    /** {@code java.<mechanism>::<situation>}; RuntimePairs implements each. */
    public static final List<String> PAIRS = List.of(
            "java.future-get-timeout::tool-timeout.wrapper-limit",
            "java.completable-or-timeout::tool-timeout.wrapper-limit",
            "java.resilience4j-timelimiter::tool-timeout.wrapper-limit",
            "java.future-get-timeout::timeout.run-deadline",
            "java.completable-or-timeout::timeout.run-deadline",
            "java.http-send-interrupted-run-deadline::timeout.run-deadline",
            "java.openai-interrupted-run-deadline::timeout.run-deadline",
            "java.send-async-cancel-run-deadline::timeout.run-deadline",
            "java.http-timeout::tool-error.own-timeout",
            "java.http-timeout-in-future::tool-error.own-timeout",
            "java.http-timeout::timeout.provider-call",
            "java.http-send-async-join::timeout.provider-call",
            "java.future-cancel::cancel.user",
            "java.completable-cancel::cancel.user",
            "java.thread-interrupt::cancel.user",
            "java.files-read::tool-error.file",
            "java.executor-wrapped-file::tool-error.file",
            "java.parse-int::tool-error.parse",
            "java.completion-wrapped-parse::tool-error.parse",
            "java.http-refused::tool-error.refused",
            "java.http-status::tool-error.http-status",
            "java.resilience4j-ratelimiter::quota.limiter",
            "java.resilience4j-bulkhead::quota.bulkhead",
            "java.resilience4j-circuitbreaker::breaker.open",
            "java.resilience4j-circuitbreaker-own-guard::breaker.open",
            "java.resilience4j-circuitbreaker-half-open::breaker.half-open",
            "java.resilience4j-circuitbreaker-half-open-own-guard::breaker.half-open",
            "java.resilience4j-ratelimiter-own-guard::quota.limiter",
            "java.semaphore-try-acquire::quota.bulkhead",
            "java.quota-check::quota.tenant",
            "java.step-budget::budget.tree",
            "java.regex-guard::guard.blocked",
            "java.interceptor-veto::veto.budget",
            "java.interceptor-veto::veto.quota",
            "java.interceptor-veto::veto.policy",
            "java.jackson-parse::definition.syntax",
            "java.process-handle::reconcile.vanished",
            "java.process-handle::reconcile.after-provider");

    public static void main(String[] args) {
        StringBuilder out = new StringBuilder("[");
        for (int i = 0; i < PAIRS.size(); i++) {
            out.append(i == 0 ? "" : ", ").append('"').append(PAIRS.get(i)).append('"');
        }
        System.out.println(out.append(']'));
    }

    private RuntimeList() {}
}
