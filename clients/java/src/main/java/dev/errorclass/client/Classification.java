package dev.errorclass.client;

import dev.errorclass.v1.ClassifyResponse;
import dev.errorclass.v1.ExceptionDescriptor;
import dev.errorclass.v1.RunEffect;
import dev.errorclass.v1.RunErrorClass;
import io.grpc.Status;

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

    /** The service answered. */
    record Classified(ExceptionDescriptor descriptor, ClassifyResponse response) implements Classification {
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
    }

    /**
     * The service did not answer: unreachable, too slow, overloaded, or the breaker is open
     * ({@code shortCircuited}: no call was made). Not Unknown: keep {@link #descriptor()}
     * ({@code toByteArray()}) and classify it later (ClassifyBatch).
     */
    record Unclassified(ExceptionDescriptor descriptor, Status.Code status, String reason, boolean shortCircuited)
            implements Classification {}
}
