package dev.errorclass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.DynamicContainer.dynamicContainer;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.errorclass.v1.ExceptionDescriptor;
import io.grpc.Status;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.TestFactory;

/**
 * Every vector file of clients/spec/vectors (or of $ERRORCLASS_SPEC_DIR/vectors), each vector
 * one test named by its file and name, run against the functions the builders and the client
 * use; a file of a kind this runner does not know fails. Prints how many vectors of each kind
 * ran ({@code vectors: error_body 36}). Alone:
 * {@code ERRORCLASS_SPEC_DIR=... mvn -q -f clients/java/pom.xml test -Dtest=VectorsTest}.
 */
class VectorsTest {
    private static final Map<String, Integer> RAN = new ConcurrentHashMap<>();
    private static final Set<String> KINDS =
            Set.of("error_body", "stream_error", "finish_reason", "response", "runtime_facts", "validate", "fit", "breaker", "outage",
                    "bundle", "bundle_verify", "retry_after");

    @TestFactory
    List<DynamicNode> vectors() throws Exception {
        List<Path> files = Spec.vectorFiles();
        assertFalse(files.isEmpty(), "no vector files under " + Spec.dir());
        List<DynamicNode> out = new ArrayList<>();
        for (Path file : files) {
            JsonObject data = Spec.read(file);
            String kind = data.get("kind").getAsString();
            String where = file.getFileName().toString();
            List<DynamicNode> tests = new ArrayList<>();
            if (!KINDS.contains(kind)) {
                tests.add(dynamicTest("kind", () -> fail(where + ": a vector file of kind '" + kind
                        + "', which this runner does not know (it knows " + new TreeSet<>(KINDS) + ")")));
            }
            for (JsonElement v : data.getAsJsonArray("vectors")) {
                JsonObject vector = v.getAsJsonObject();
                String name = vector.get("name").getAsString();
                tests.add(dynamicTest(name, () -> {
                    RAN.merge(kind, 1, Integer::sum);
                    try {
                        run(kind, vector.getAsJsonObject("input"), vector.getAsJsonObject("want"));
                    } catch (AssertionError e) {
                        throw new AssertionError(where + " " + name + ": " + e.getMessage(), e);
                    }
                }));
            }
            out.add(dynamicContainer(where, tests));
        }
        return out;
    }

    @AfterAll
    static void counts() {
        new TreeMap<>(RAN).forEach((kind, n) -> System.out.println("vectors: " + kind + " " + n));
    }

    static void run(String kind, JsonObject input, JsonObject want) throws Exception {
        switch (kind) {
            case "error_body" -> errorBody(input, want);
            case "stream_error" -> evidence(ErrorBodies.readStream(Spec.text(input, "event"), Spec.text(input, "data")), want);
            case "bundle" -> BundleVectors.classify(input, want);
            case "bundle_verify" -> BundleVectors.verify(input, want);
            case "retry_after" -> BundleVectors.retryAfter(input, want);
            case "finish_reason" -> builder(Descriptors.fromFinishReason(Spec.text(input, "reason"), Spec.text(input, "provider"),
                    input.get("prompt_blocked").getAsBoolean(), Spec.text(input, "model")), want);
            case "response" -> builder(Descriptors.fromResponse(input.get("response").toString(), Spec.text(input, "provider")), want);
            case "runtime_facts" -> runtimeFacts(input, want);
            case "validate" -> validate(input, want);
            case "fit" -> same(Spec.json(Descriptors.fit(Spec.descriptor(input.getAsJsonObject("descriptor")))),
                    want.getAsJsonObject("descriptor"));
            case "breaker" -> breaker(input, want);
            case "outage" -> Outage.run(input, want);
            default -> fail("a vector file of kind '" + kind + "', which this runner does not know");
        }
    }

    /** Every field of {@code got} as {@code want} says, naming those that differ. */
    static void same(JsonObject got, JsonObject want) {
        List<String> differences = Spec.differences(want, got);
        if (!differences.isEmpty()) {
            fail(String.join("; ", differences));
        }
    }

    static void errorBody(JsonObject input, JsonObject want) {
        String body = Spec.text(input, "body");
        if (input.has("pad")) {
            JsonObject pad = input.getAsJsonObject("pad");
            body = body.replace("@PAD@", pad.get("text").getAsString().repeat(pad.get("count").getAsInt()));
        }
        Integer status = input.get("status").isJsonNull() ? null : input.get("status").getAsInt();
        Map<String, String> headers = new TreeMap<>();
        input.getAsJsonObject("headers").entrySet().forEach(h -> headers.put(h.getKey(), h.getValue().getAsString()));
        evidence(ErrorBodies.read(status, headers, body), want);
    }

    /** An error body's or a stream error's evidence, in the vectors' spelling. */
    static void evidence(ErrorBodies.Evidence e, JsonObject want) {
        JsonObject got = new JsonObject();
        if (!e.code().isEmpty()) {
            got.addProperty("code", e.code());
        }
        if (e.grpcStatus() != null) {
            got.addProperty("grpc_status", e.grpcStatus());
        }
        if (!e.message().isEmpty()) {
            got.addProperty("message", e.message());
        }
        if (!e.attributes().isEmpty()) {
            got.add("attributes", Spec.map(e.attributes()));
        }
        same(got, emptied(want));
    }

    /** {@code want} without its empty values (an absent key means the empty value). */
    private static JsonObject emptied(JsonObject want) {
        JsonObject out = new JsonObject();
        want.entrySet().forEach(e -> {
            JsonElement v = e.getValue();
            boolean empty = v.isJsonNull() || (v.isJsonPrimitive() && v.getAsJsonPrimitive().isString() && v.getAsString().isEmpty())
                    || (v.isJsonObject() && v.getAsJsonObject().size() == 0);
            if (!empty) {
                out.add(e.getKey(), v);
            }
        });
        return out;
    }

    /** A builder's descriptor: {@code language} is this client's, and the rest is {@code want}'s. */
    static void builder(ExceptionDescriptor got, JsonObject want) {
        JsonElement expected = Spec.want(want, "descriptor");
        if (expected.isJsonNull()) {
            assertEquals(null, got == null ? null : Spec.json(got).toString(), "descriptor");
            return;
        }
        if (got == null) {
            fail("descriptor: want " + expected + ", got null");
        }
        JsonObject json = Spec.json(got);
        assertEquals(Descriptors.LANGUAGE, Spec.text(json, "language"), "language");
        json.remove("language");
        same(json, expected.getAsJsonObject());
    }

    static void runtimeFacts(JsonObject input, JsonObject want) {
        Map<String, Object> facts = Spec.plainMap(input.getAsJsonObject("facts"));
        try {
            RuntimeFacts got = RuntimeFacts.of(facts);
            if (want.has("error")) {
                fail("error: want " + want.get("error") + ", got attributes " + got.attributes());
            }
            same(Spec.map(got.attributes()), want.has("attributes") ? want.getAsJsonObject("attributes") : new JsonObject());
        } catch (RuntimeFacts.InvalidFactException e) {
            assertEquals(Spec.text(want, "error"), e.fact(), "error (" + e.getMessage() + ")");
        }
    }

    static void validate(JsonObject input, JsonObject want) {
        ExceptionDescriptor d = Spec.descriptor(input.getAsJsonObject("descriptor"));
        try {
            ExceptionDescriptor got = Descriptors.validate(d);
            if (want.has("violations")) {
                fail("violations: want " + want.get("violations") + ", got the descriptor " + Spec.json(got));
            }
            same(Spec.json(got), want.getAsJsonObject("descriptor"));
        } catch (InvalidDescriptorException e) {
            if (!want.has("violations")) {
                fail("descriptor: want " + want.get("descriptor") + ", got violations " + e.violations());
            }
            Set<String> expected = new TreeSet<>();
            want.getAsJsonArray("violations").forEach(v -> expected.add(v.getAsJsonObject().get("field").getAsString()));
            Set<String> got = e.violations().stream().map(InvalidDescriptorException.FieldViolation::field)
                    .collect(Collectors.toCollection(TreeSet::new));
            assertEquals(expected, got, "violations (the field paths)");
        }
    }

    static void breaker(JsonObject input, JsonObject want) {
        Breaker breaker = new Breaker();
        List<String> states = new ArrayList<>();
        List<Long> waits = new ArrayList<>();
        for (JsonElement e : input.getAsJsonArray("events")) {
            String event = e.getAsString();
            switch (event) {
                case "ok" -> breaker.succeeded();
                case "call" -> { }
                case "probe_ok", "probe_failed" -> {
                    waits.add(breaker.probeWait().toMillis());
                    breaker.probed(event.equals("probe_ok"));
                }
                default -> breaker.failed(Status.Code.valueOf(event));
            }
            if (event.equals("call")) {
                states.add(breaker.allow() ? "allowed" : "short_circuited");
            } else {
                states.add(breaker.isOpen() ? "open" : "closed");
            }
        }
        assertEquals(Spec.strings(want.get("states")), states, "states");
        if (want.has("probe_waits_ms")) {
            List<Long> expected = new ArrayList<>();
            want.getAsJsonArray("probe_waits_ms").forEach(w -> expected.add(w.getAsLong()));
            assertEquals(expected, waits, "probe_waits_ms");
        }
    }
}
