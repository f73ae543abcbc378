package dev.errorclass.client;

import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What only the runtime knows about a failure, as the attributes of the runtime contract
 * ({@link Facts#RUNTIME_FACTS}; docs/clients.md, "What only the runtime knows"): whose time
 * limit fired, an interceptor's veto, the stage of the agent definition that failed, which of
 * the runtime's own guards refused a call before it was made, and the provider calls an
 * orphaned run made. A runtime builds these with the factory methods (or
 * {@link #of} from its own configuration) and never types an attribute name; every one is
 * checked as clients/spec/vectors/runtime_facts.json says.
 *
 * <pre>{@code
 * Descriptors.from(e, Origin.ORIGIN_TOOL, "", RuntimeFacts.toolTimeLimit());  // ToolTimeout
 * Descriptors.from(e, Origin.ORIGIN_INTERCEPTOR, "", RuntimeFacts.veto(Veto.BUDGET));
 * Descriptors.from(e, Origin.ORIGIN_RUNTIME, "openai", RuntimeFacts.refusedBy(RefusedBy.BREAKER));
 * }</pre>
 */
public final class RuntimeFacts {
    /** No facts: the exception's own evidence decides. */
    public static final RuntimeFacts NONE = new RuntimeFacts(Map.of());

    private static final Pattern OPEN_WORD = Pattern.compile(Facts.OPEN_FACT_PATTERN);
    private static final Pattern DIGITS = Pattern.compile("[0-9]+");

    /** A fact's value the contract does not accept; {@link #fact()} names it. */
    public static final class InvalidFactException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        private final String fact;

        InvalidFactException(String fact, String message) {
            super(fact + ": " + message);
            this.fact = fact;
        }

        /** The refused fact's name ({@code veto}). */
        public String fact() {
            return fact;
        }
    }

    private final Map<String, String> attributes;

    private RuntimeFacts(Map<String, String> attributes) {
        this.attributes = attributes;
    }

    /**
     * The facts named in {@code facts} ({@code time_limit}, {@code veto}, {@code stage},
     * {@code refused_by}, {@code provider_calls}; a null value is no fact), each value stripped and lower-cased:
     * a closed fact takes its values, an open one also any word matching {@link
     * Facts#OPEN_FACT_PATTERN}, a count a whole number (digits, or an integer) written in
     * decimal. Throws {@link InvalidFactException} naming the first refused fact, in the
     * contract's order, or a name that is no fact.
     */
    public static RuntimeFacts of(Map<String, ?> facts) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Facts.RuntimeFact fact : Facts.RUNTIME_FACTS) {
            Object value = facts.get(fact.name());
            if (value != null) {
                out.put(fact.name(), checked(fact, value));
            }
        }
        for (String name : facts.keySet()) {
            if (facts.get(name) != null && !out.containsKey(name)) {
                throw new InvalidFactException(name, "is not a runtime fact; the contract's are "
                        + Facts.RUNTIME_FACTS.stream().map(Facts.RuntimeFact::name).toList());
            }
        }
        return new RuntimeFacts(Map.copyOf(out));
    }

    private static String checked(Facts.RuntimeFact fact, Object value) {
        if (fact.count()) {
            return count(fact.name(), value);
        }
        if (!(value instanceof CharSequence) && !(value instanceof Enum<?>)) {
            throw new InvalidFactException(fact.name(), value + " is not text");
        }
        String word = Text.strip(value instanceof Enum<?> e ? e.name() : value.toString()).toLowerCase(Locale.ROOT);
        if (fact.values().contains(word) || (fact.open() && OPEN_WORD.matcher(word).matches())) {
            return word;
        }
        throw new InvalidFactException(fact.name(), "'" + value + "' is not one of " + fact.values()
                + (fact.open() ? " nor a word (" + Facts.OPEN_FACT_PATTERN + ")" : ""));
    }

    private static String count(String name, Object value) {
        BigInteger n = null;
        if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
            n = BigInteger.valueOf(((Number) value).longValue());
        } else if (value instanceof BigInteger b) {
            n = b;
        } else if (value instanceof CharSequence text && DIGITS.matcher(Text.strip(text.toString())).matches()) {
            n = new BigInteger(Text.strip(text.toString()));
        }
        if (n == null || n.signum() < 0) {
            throw new InvalidFactException(name, "'" + value + "' is not a count (0, 1, 2, ...)");
        }
        return n.toString();
    }

    /** The tool wrapper's own time limit fired (with origin TOOL: ToolTimeout). */
    public static RuntimeFacts toolTimeLimit() {
        return timeLimit(TimeLimit.TOOL);
    }

    /** The run's (or a step's) deadline fired (Timeout). */
    public static RuntimeFacts runTimeLimit() {
        return timeLimit(TimeLimit.RUN);
    }

    /** Whose time limit fired. */
    public static RuntimeFacts timeLimit(TimeLimit limit) {
        return of(Map.of(TimeLimit.FACT, limit.value()));
    }

    /** An interceptor vetoed the next step (origin INTERCEPTOR: the run pauses). */
    public static RuntimeFacts veto(Veto veto) {
        return veto(veto.value());
    }

    /** A veto of the runtime's own kind: a word ({@link Facts#OPEN_FACT_PATTERN}), classed Unknown unless a rule knows it. */
    public static RuntimeFacts veto(String veto) {
        return of(Map.of(Veto.FACT, veto));
    }

    /** The runtime failed on the agent definition at this stage (origin RUNTIME). */
    public static RuntimeFacts stage(Stage stage) {
        return of(Map.of(Stage.FACT, stage.value()));
    }

    /**
     * The runtime's own guard refused the call before it was made, whatever it threw (a
     * resilience4j {@code CallNotPermittedException}, an {@code IllegalStateException} of a
     * hand-written quota check): its circuit breaker for the provider (ProviderUnavailable),
     * its rate limiter, concurrency cap or quota (QuotaExceeded), its budget (BudgetExceeded).
     * Sent with origin RUNTIME (docs/clients.md, "The runtime's own guards").
     */
    public static RuntimeFacts refusedBy(RefusedBy guard) {
        return of(Map.of(RefusedBy.FACT, guard.value()));
    }

    /** Reconciliation found an orphaned run that made this many provider calls (origin RECONCILER). */
    public static RuntimeFacts reconciled(long providerCalls) {
        return of(Map.of(Facts.FACT_PROVIDER_CALLS, providerCalls));
    }

    /** These facts and {@code more}'s (a fact in both: {@code more}'s). */
    public RuntimeFacts and(RuntimeFacts more) {
        Map<String, String> out = new LinkedHashMap<>(attributes);
        out.putAll(more.attributes);
        return new RuntimeFacts(Map.copyOf(out));
    }

    /** The descriptor attributes these facts stand for. */
    public Map<String, String> attributes() {
        return attributes;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RuntimeFacts other && other.attributes.equals(attributes);
    }

    @Override
    public int hashCode() {
        return attributes.hashCode();
    }

    @Override
    public String toString() {
        return "RuntimeFacts" + attributes;
    }
}
