package dev.errorclass.client;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import dev.errorclass.v1.ExceptionDescriptor;
import java.io.IOException;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * A ruleset bundle (docs/bundles.md), loaded, verified when trusted keys are given, and ready to
 * classify in process exactly as the service would, with the same ruleset version and digest.
 *
 * <pre>{@code
 * Bundle bundle = Bundle.load(Path.of("rules.bundle.json"), List.of(Bundle.publicKey(Path.of("ops-2026.pub"))));
 * Classification.Classified answer = bundle.classify(Descriptors.from(e, Origin.ORIGIN_PROVIDER, "openai"));
 * answer.className(); answer.ruleId(); answer.local(); answer.bundleDigest();
 * }</pre>
 *
 * <p>With trusted keys the bundle is used only when one of them signed its exact bytes (Ed25519,
 * the signatures document {@code BUNDLE.sig.json} beside it); a tampered, unsigned or
 * unknown-key bundle raises {@link BundleException} with a stable {@link BundleException#code()}
 * ({@code bad_signature}, {@code unsigned}, {@code unknown_key}). Several keys may be trusted at
 * once, so a key can rotate (sign with both, trust the new one, stop signing with the old one).
 * Without trusted keys the bundle is read as it is.
 *
 * <p>Loading reads the whole document, compiles every message pattern once (re2j: RE2's
 * syntax and linear-time matching, as the service) and indexes the rules by type name; a {@code
 * Bundle} is immutable and safe to share between threads. Classifying a descriptor is a few
 * map lookups (a few microseconds on the bundled library: {@code make bench}).
 */
public final class Bundle {
    /** The format this evaluator reads. */
    public static final String FORMAT = "errorclass-bundle";
    public static final int FORMAT_VERSION = 1;
    /** The precedence key this evaluator implements; a bundle naming another is refused. */
    public static final List<String> PRECEDENCE =
            List.of("decisive", "fallback", "type_depth", "condition_count", "priority", "layer", "order");

    private final String name;
    private final String version;
    private final String digest;
    private final String bundleDigest;
    private final List<String> keyIds;
    private final BundleEvaluator evaluator;

    private Bundle(byte[] data, List<String> keyIds) {
        JsonObject doc = document(data);
        JsonElement format = doc.get("format");
        if (!Json.isText(format) || !format.getAsString().equals(FORMAT)) {
            throw new BundleException("invalid_bundle", "not a ruleset bundle (its format is not " + FORMAT + ")");
        }
        JsonElement formatVersion = doc.get("format_version");
        List<String> precedence = precedence(doc.get("precedence"));
        if (formatVersion == null || !formatVersion.isJsonPrimitive() || !formatVersion.getAsJsonPrimitive().isNumber()
                || formatVersion.getAsBigDecimal().compareTo(java.math.BigDecimal.valueOf(FORMAT_VERSION)) != 0
                || !PRECEDENCE.equals(precedence)) {
            throw new BundleException("unsupported_format", "bundle format " + formatVersion + " with precedence "
                    + doc.get("precedence") + ": this evaluator reads format " + FORMAT_VERSION + " with " + PRECEDENCE);
        }
        try {
            this.evaluator = new BundleEvaluator(doc);
            JsonObject ruleset = doc.getAsJsonObject("ruleset");
            this.name = BundleEvaluator.text(ruleset, "name");
        } catch (BundleException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new BundleException("invalid_bundle", e.toString());
        }
        this.version = evaluator.version;
        this.digest = evaluator.digest;
        this.bundleDigest = "sha256:" + HexFormat.of().formatHex(BundleSignatures.sha256(data));
        this.keyIds = keyIds;
    }

    /** A bundle file, read as it is (no signature checked). */
    public static Bundle load(Path file) throws IOException {
        return fromBytes(Files.readAllBytes(file), null, List.of());
    }

    /**
     * A bundle file, verified against its signatures document beside it ({@code FILE.sig.json};
     * none there: {@code unsigned}) when {@code trustedKeys} is not empty.
     */
    public static Bundle load(Path file, List<PublicKey> trustedKeys) throws IOException {
        return load(file, Path.of(file + ".sig.json"), trustedKeys);
    }

    /** A bundle file verified against the signatures document {@code signatures} (absent: none). */
    public static Bundle load(Path file, Path signatures, List<PublicKey> trustedKeys) throws IOException {
        byte[] data = Files.readAllBytes(file);
        byte[] signed = !trustedKeys.isEmpty() && Files.exists(signatures) ? Files.readAllBytes(signatures) : null;
        return fromBytes(data, signed, trustedKeys);
    }

    /**
     * A bundle from its bytes (as fetched or shipped), verified against {@code signatures} (the
     * signatures document's bytes; null for none) when {@code trustedKeys} is not empty.
     */
    public static Bundle fromBytes(byte[] bundle, byte[] signatures, List<PublicKey> trustedKeys) {
        List<String> keyIds = trustedKeys.isEmpty() ? List.of() : BundleSignatures.verify(bundle, signatures, trustedKeys);
        return new Bundle(bundle.clone(), keyIds);
    }

    /** An Ed25519 public key from SubjectPublicKeyInfo PEM text ({@code classifier bundle keygen}'s .pub file). */
    public static PublicKey publicKey(String pem) {
        return BundleSignatures.publicKey(pem);
    }

    /** An Ed25519 public key from a SubjectPublicKeyInfo PEM file. */
    public static PublicKey publicKey(Path pemFile) throws IOException {
        return BundleSignatures.publicKey(Files.readString(pemFile, StandardCharsets.US_ASCII));
    }

    /** A key's id in a signatures document: the first 16 hex digits of SHA-256 over its DER SubjectPublicKeyInfo. */
    public static String keyId(PublicKey key) {
        return BundleSignatures.keyId(key);
    }

    /**
     * The service's answer for {@code descriptor}, from this bundle: class, action, effect,
     * retryable, the deciding rule (empty for an Unknown), the ruleset's version and digest, why
     * an Unknown is one, and for a retryable answer whose descriptor carries the provider's retry
     * evidence the wait it advises ({@link Classification.Classified#retryAfter()}, read as the
     * service reads it: {@link RetryAfter}, capped by the rule's cap); marked {@link
     * Classification.Classified#local() local} with this bundle's {@link #bundleDigest()}. A
     * descriptor the service would refuse (past a limit, an empty type name, a status out of
     * range) raises {@link InvalidDescriptorException}, as a call would; the builders of {@link
     * Descriptors} never make one.
     */
    public Classification.Classified classify(ExceptionDescriptor descriptor) {
        return classify(descriptor, Clock.systemUTC());
    }

    /**
     * As {@link #classify(ExceptionDescriptor)}, with the runtime's clock given: it is read only
     * when an HTTP date or a reset timestamp must become a wait and the provider sent no readable
     * {@code date} header of its own.
     */
    public Classification.Classified classify(ExceptionDescriptor descriptor, Clock clock) {
        return new Classification.Classified(descriptor, evaluator.classify(descriptor, clock), bundleDigest);
    }

    /** The ruleset's name. */
    public String name() {
        return name;
    }

    /** The ruleset's version, which every answer carries. */
    public String version() {
        return version;
    }

    /** The ruleset's digest (the one GetRuleset reports), which every answer carries. */
    public String digest() {
        return digest;
    }

    /** {@code sha256:<hex>} of the bundle's bytes (GetBundle's {@code bundle_digest}): what names a local answer. */
    public String bundleDigest() {
        return bundleDigest;
    }

    /** The trusted keys whose signatures verified, in the signatures document's order; empty when loaded without keys. */
    public List<String> keyIds() {
        return keyIds;
    }

    /** How many rules the bundle holds. */
    public int ruleCount() {
        return evaluator.ruleCount;
    }

    @Override
    public String toString() {
        return "Bundle[" + name + " " + version + " " + digest + ", " + evaluator.ruleCount + " rules, " + bundleDigest + "]";
    }

    /** The bundle's JSON object: UTF-8, strict JSON (RFC 8259), one value. */
    private static JsonObject document(byte[] data) {
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(data)).toString();
        } catch (CharacterCodingException e) {
            throw new BundleException("invalid_bundle", "not UTF-8 (" + e.getMessage() + ")");
        }
        JsonElement value;
        try (JsonReader reader = new JsonReader(new StringReader(text))) {
            reader.setStrictness(Strictness.STRICT);
            value = JsonParser.parseReader(reader);
            if (reader.peek() != JsonToken.END_DOCUMENT) {
                throw new JsonParseException("text after the document");
            }
        } catch (JsonParseException | IOException | IllegalStateException e) {
            throw new BundleException("invalid_bundle", "not JSON (" + e.getMessage() + ")");
        }
        if (!value.isJsonObject()) {
            throw new BundleException("invalid_bundle", "not a ruleset bundle (not a JSON object)");
        }
        return value.getAsJsonObject();
    }

    private static List<String> precedence(JsonElement value) {
        List<String> out = new ArrayList<>();
        if (value != null && value.isJsonArray()) {
            for (JsonElement e : (JsonArray) value) {
                out.add(Json.isText(e) ? e.getAsString() : String.valueOf(e));
            }
        }
        return out;
    }
}
