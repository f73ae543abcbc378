package dev.errorclass.client;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What only the runtime knows about a failure, as the contract attributes of
 * tests/conformance/runtime/README.md: a tool wrapper's or the run's own time limit, an
 * interceptor's veto, the stage of the agent definition that failed, and the provider calls
 * an orphaned run made. A runtime builds these with the factory methods and never types an
 * attribute name.
 *
 * <pre>{@code
 * Descriptors.from(e, Origin.ORIGIN_TOOL, "", RuntimeFacts.toolTimeLimit());  // ToolTimeout
 * Descriptors.from(e, Origin.ORIGIN_INTERCEPTOR, "", RuntimeFacts.veto(Veto.BUDGET));
 * }</pre>
 */
public final class RuntimeFacts {
    /** Whose time limit fired. */
    public enum TimeLimit { TOOL, RUN }

    /** Why an interceptor vetoed the next step on purpose. */
    public enum Veto { BUDGET, QUOTA, POLICY }

    /** Where the agent definition failed. */
    public enum Stage { LOAD, PARSE, COMPILE, VALIDATE }

    /** No facts: the exception's own evidence decides. */
    public static final RuntimeFacts NONE = new RuntimeFacts(Map.of());

    private final Map<String, String> attributes;

    private RuntimeFacts(Map<String, String> attributes) {
        this.attributes = Map.copyOf(attributes);
    }

    /** The tool wrapper's own time limit fired (with origin TOOL: ToolTimeout). */
    public static RuntimeFacts toolTimeLimit() {
        return NONE.timeLimit(TimeLimit.TOOL);
    }

    /** The run's (or a step's) deadline fired (Timeout). */
    public static RuntimeFacts runTimeLimit() {
        return NONE.timeLimit(TimeLimit.RUN);
    }

    /** An interceptor vetoed the next step (origin INTERCEPTOR: the run pauses). */
    public static RuntimeFacts veto(Veto veto) {
        return NONE.with("veto", veto.name());
    }

    /** The runtime failed on the agent definition at this stage (origin RUNTIME). */
    public static RuntimeFacts stage(Stage stage) {
        return NONE.with("stage", stage.name());
    }

    /** Reconciliation found an orphaned run that made this many provider calls (origin RECONCILER). */
    public static RuntimeFacts reconciled(long providerCalls) {
        if (providerCalls < 0) {
            throw new IllegalArgumentException("providerCalls must be 0 or more, not " + providerCalls);
        }
        return NONE.with("provider_calls", Long.toString(providerCalls));
    }

    /** These facts with the time limit set. */
    public RuntimeFacts timeLimit(TimeLimit limit) {
        return with("time_limit", limit.name());
    }

    /** The descriptor attributes these facts stand for. */
    public Map<String, String> attributes() {
        return attributes;
    }

    private RuntimeFacts with(String key, String value) {
        Map<String, String> out = new LinkedHashMap<>(attributes);
        out.put(key, value.toLowerCase(java.util.Locale.ROOT));
        return new RuntimeFacts(out);
    }

    @Override
    public String toString() {
        return "RuntimeFacts" + attributes;
    }
}
