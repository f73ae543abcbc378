package dev.errorclass.client;

import dev.errorclass.v1.ClassifyResponse;
import dev.errorclass.v1.ExceptionDescriptor;
import dev.errorclass.v1.RunEffect;
import dev.errorclass.v1.RunErrorClass;
import dev.errorclass.v1.UnknownReason;
import io.grpc.Status;
import java.time.Duration;
import java.util.Optional;

/**
 * What {@link ClassifierClient#classify} answers: the service's classification, or, when the
 * service could not answer, {@link Unclassified} with the descriptor kept.
 *
 * <p>Never store Unknown (0) for an {@code Unclassified}: Unknown means "no rule matched", and an
 * outage is no measurement. Store the descriptor and classify it later (ClassifyBatch).
 */
public sealed interface Classification permits Classification.Classified, Classification.Unclassified {

    /** The descriptor that was (or could not be) classified. */
    ExceptionDescriptor descriptor();

    /**
     * The service answered, or a bundle in this process did ({@link #local()}, {@link
     * Bundle#classify}): the same fields either way, the same answer for the same ruleset.
     */
    record Classified(ExceptionDescriptor descriptor, ClassifyResponse response, String bundleDigest)
            implements Classification {
        public Classified {
            bundleDigest = bundleDigest == null ? "" : bundleDigest;
        }

        /** The service's answer. */
        public Classified(ExceptionDescriptor descriptor, ClassifyResponse response) {
            this(descriptor, response, "");
        }

        /**
         * Whether a bundle in this process answered ({@link Bundle#classify}) rather than the
         * service; {@link #bundleDigest()} then names the bundle ({@code sha256:<hex>} of its bytes).
         */
        public boolean local() {
            return !bundleDigest.isEmpty();
        }

        /** The permanent class number to store. */
        public int classNumber() {
            return response.getErrorClassValue();
        }

        public RunErrorClass errorClass() {
            return response.getErrorClass();
        }

        /** The taxonomy's name, e.g. RateLimited. */
        public String className() {
            return response.getClassName();
        }

        /** The operator action's id, e.g. provider.backoff. */
        public String action() {
            return response.getAction().getId();
        }

        public RunEffect effect() {
            return response.getEffect();
        }

        public boolean retryable() {
            return response.getRetryable();
        }

        /** The rule that decided; empty when Unknown. */
        public String ruleId() {
            return response.getRuleId();
        }

        /** The ruleset's version and digest: with the rule, what traces and re-runs an answer. */
        public String rulesetVersion() {
            return response.getRulesetVersion();
        }

        public String rulesetDigest() {
            return response.getRulesetDigest();
        }

        /** Why an Unknown is one (no rule matched, or tied rules disagreed); UNSPECIFIED otherwise. */
        public UnknownReason unknownReason() {
            return response.getUnknownReason();
        }

        /**
         * How long to wait before a retry, when the answer is retryable and the provider said
         * (its {@code retry-after} or rate-limit reset headers, Google's RetryInfo: the
         * descriptor's evidence attributes), capped by the ruleset; empty when the provider did
         * not say or a retry cannot help. A local answer reads it as the service does ({@link
         * RetryAfter}).
         */
        public Optional<Duration> retryAfter() {
            if (!response.hasRetryAfter()) {
                return Optional.empty();
            }
            com.google.protobuf.Duration d = response.getRetryAfter();
            return Optional.of(Duration.ofSeconds(d.getSeconds(), d.getNanos()));
        }

        /**
         * Where {@link #retryAfter()} came from: the attribute it was read from ({@code
         * http.response.header.retry-after}), with {@code " (capped)"} when the ruleset's cap cut
         * it; empty when there is no retryAfter.
         */
        public String retryAfterSource() {
            return response.getRetryAfterSource();
        }

        /** {@link #retryAfter()} with its source and whether the cap cut it; empty when there is no wait. */
        public Optional<RetryAfter> retryAdvice() {
            return retryAfter().filter(w -> !response.getRetryAfterSource().isEmpty())
                    .map(w -> RetryAfter.fromLabelled(w, response.getRetryAfterSource()));
        }
    }

    /**
     * The service did not answer: unreachable, too slow, overloaded, or the breaker is open
     * ({@code shortCircuited}: no call was made). Not Unknown: keep {@link #descriptor()}
     * ({@code toByteArray()}) and classify it later (ClassifyBatch).
     */
    record Unclassified(ExceptionDescriptor descriptor, Status.Code status, String reason, boolean shortCircuited)
            implements Classification {}
}
