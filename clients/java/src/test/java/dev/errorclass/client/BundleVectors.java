package dev.errorclass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.errorclass.v1.ExceptionDescriptor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code bundle} and {@code bundle_verify} vectors (clients/spec/README.md): each bundle of
 * clients/spec/bundles loaded once, each vector's descriptor classified by it and every field of
 * the answer compared with the engine's, the ruleset's version and digest with the bundle's; each
 * verification's verdict compared with the service's verifier's.
 */
final class BundleVectors {
    private static final Map<String, Bundle> BUNDLES = new ConcurrentHashMap<>();

    private BundleVectors() {}

    static Bundle bundle(String name) {
        return BUNDLES.computeIfAbsent(name, n -> {
            try {
                return Bundle.load(Spec.dir().resolve("bundles").resolve(n + ".json"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /** The descriptor of a bundle vector, {@code @PAD@} in a message standing for pad.text repeated pad.count times. */
    static ExceptionDescriptor descriptor(JsonObject input) {
        JsonObject d = input.getAsJsonObject("descriptor").deepCopy();
        if (input.has("pad")) {
            JsonObject pad = input.getAsJsonObject("pad");
            String text = pad.get("text").getAsString().repeat(pad.get("count").getAsInt());
            List<JsonObject> subjects = new ArrayList<>(List.of(d));
            if (d.has("causes")) {
                d.getAsJsonArray("causes").forEach(c -> subjects.add(c.getAsJsonObject()));
            }
            for (JsonObject s : subjects) {
                if (s.has("message")) {
                    s.addProperty("message", s.get("message").getAsString().replace("@PAD@", text));
                }
            }
        }
        return Spec.descriptor(d);
    }

    /** An answer in the vectors' spelling of {@code want} (empty values left out). */
    static JsonObject fields(Classification.Classified a) {
        JsonObject out = new JsonObject();
        out.addProperty("class", a.className());
        out.addProperty("action", a.action());
        out.addProperty("effect", Facts.EFFECT_NAMES.get(a.effect().getNumber()));
        if (a.retryable()) {
            out.addProperty("retryable", true);
        }
        if (!a.ruleId().isEmpty()) {
            out.addProperty("rule_id", a.ruleId());
        }
        int reason = a.response().getUnknownReasonValue();
        if (reason != 0) {
            out.addProperty("unknown_reason", Facts.UNKNOWN_REASON_NAMES.get(reason));
        }
        a.retryAdvice().ifPresent(r -> out.add("retry_after", advice(r)));
        return out;
    }

    /** A wait in the vectors' spelling: {@code seconds} (whole microseconds, as a double), {@code source}, {@code capped}. */
    static JsonObject advice(RetryAfter r) {
        JsonObject out = new JsonObject();
        out.addProperty("seconds", Durations.seconds(r.delay()));
        out.addProperty("source", r.source());
        out.addProperty("capped", r.capped());
        return out;
    }

    /** A vector's {@code now} (RFC 3339) as a fixed clock; without one, a clock that fails when read (nothing should need it). */
    static Clock clock(JsonObject input) {
        if (input.has("now")) {
            return Clock.fixed(OffsetDateTime.parse(input.get("now").getAsString()).toInstant(), ZoneOffset.UTC);
        }
        return new Clock() {
            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                throw new AssertionError("the clock was read for a vector without 'now'");
            }
        };
    }

    /** The {@code retry_after} vectors: the wait {@link RetryAfter#read} advises. */
    static void retryAfter(JsonObject input, JsonObject want) {
        Map<String, String> attributes = new java.util.TreeMap<>();
        input.getAsJsonObject("attributes").entrySet().forEach(e -> attributes.put(e.getKey(), e.getValue().getAsString()));
        Duration cap = Durations.ofSeconds(input.get("cap_seconds").getAsDouble());
        JsonObject got = new JsonObject();
        RetryAfter.read(attributes, cap, clock(input)).ifPresent(r -> got.add("retry_after", advice(r)));
        VectorsTest.same(got, want);
    }

    static void classify(JsonObject input, JsonObject want) {
        Bundle bundle = bundle(input.get("bundle").getAsString());
        ExceptionDescriptor d = descriptor(input);
        Classification.Classified answer = bundle.classify(d, clock(input));
        VectorsTest.same(fields(answer), want);
        assertEquals(bundle.version(), answer.rulesetVersion(), "ruleset.version");
        assertEquals(bundle.digest(), answer.rulesetDigest(), "ruleset.digest");
        assertTrue(answer.local(), "local");
        assertEquals(bundle.bundleDigest(), answer.bundleDigest(), "bundle digest");
        assertEquals(d, answer.descriptor(), "the descriptor kept");
    }

    static void verify(JsonObject input, JsonObject want) throws IOException {
        Path dir = Spec.dir();
        byte[] data = Files.readAllBytes(dir.resolve("bundles").resolve(input.get("bundle").getAsString() + ".json"));
        if (input.has("flip_byte")) {
            data[input.get("flip_byte").getAsInt()] ^= 0x01;
        }
        JsonElement sig = input.get("signatures");
        byte[] signatures = sig == null || sig.isJsonNull() ? null : sig.getAsString().getBytes(StandardCharsets.UTF_8);
        List<PublicKey> keys = new ArrayList<>();
        for (JsonElement k : input.getAsJsonArray("trusted_keys")) {
            keys.add(Bundle.publicKey(dir.resolve("keys").resolve(k.getAsString() + ".pub")));
        }
        JsonObject got = new JsonObject();
        try {
            Bundle bundle = Bundle.fromBytes(data, signatures, keys);
            got.addProperty("accepted", true);
            JsonArray ids = new JsonArray();
            bundle.keyIds().forEach(ids::add);
            got.add("key_ids", ids);
        } catch (BundleException e) {
            if (!e.getMessage().startsWith(e.code() + ": ")) {
                fail("the error names its code first: " + e.getMessage());
            }
            got.addProperty("refused", e.code());
        }
        VectorsTest.same(got, want);
    }
}
