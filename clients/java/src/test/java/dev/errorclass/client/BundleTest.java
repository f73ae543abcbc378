package dev.errorclass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.re2j.Pattern;
import dev.errorclass.v1.Cause;
import dev.errorclass.v1.ExceptionDescriptor;
import dev.errorclass.v1.Origin;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bundle evaluator beyond the shared vectors (which VectorsTest runs): loading a signed
 * bundle file with its signatures beside it, the refusals a runtime sees (tampered, unsigned,
 * unknown key, another format, a broken document, a key that is not Ed25519), a descriptor the
 * service would refuse, the local answer's marks, and the shortcuts in front of re2j
 * (LiteralPattern, LiteralPrefilter) held to re2j's answer on every vector's message and on
 * messages made around each literal.
 */
class BundleTest {
    @TempDir
    Path tmp;

    private static Path bundles() {
        return Spec.dir().resolve("bundles");
    }

    private static PublicKey key(String name) throws IOException {
        return Bundle.publicKey(Spec.dir().resolve("keys").resolve(name + ".pub"));
    }

    /** A signatures document by the TEST key {@code name} (its private key is committed for the vectors), as `classifier bundle sign` writes it. */
    static String sign(byte[] bundle, String... names) throws Exception {
        StringBuilder entries = new StringBuilder();
        for (String name : names) {
            String pem = Files.readString(Spec.dir().resolve("keys").resolve(name + ".key"), StandardCharsets.US_ASCII);
            byte[] der = Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
            PrivateKey privateKey = KeyFactory.getInstance("Ed25519").generatePrivate(new PKCS8EncodedKeySpec(der));
            Signature signer = Signature.getInstance("Ed25519");
            signer.initSign(privateKey);
            signer.update(bundle);
            entries.append(entries.length() == 0 ? "" : ", ").append("{\"key_id\": \"").append(Bundle.keyId(key(name)))
                    .append("\", \"algorithm\": \"ed25519\", \"signature\": \"")
                    .append(Base64.getEncoder().encodeToString(signer.sign())).append("\"}");
        }
        return "{\"format\": \"errorclass-bundle-signatures\", \"format_version\": 1, \"signatures\": [" + entries + "]}";
    }

    @Test
    void aSignedFileIsVerifiedWithItsSignaturesBesideIt() throws Exception {
        byte[] data = Files.readAllBytes(bundles().resolve("library.json"));
        Path file = tmp.resolve("rules.bundle.json");
        Files.write(file, data);
        Files.writeString(tmp.resolve("rules.bundle.json.sig.json"), sign(data, "TEST-ONLY-a", "TEST-ONLY-b"));

        Bundle both = Bundle.load(file, List.of(key("TEST-ONLY-a"), key("TEST-ONLY-b")));
        assertEquals(List.of(Bundle.keyId(key("TEST-ONLY-a")), Bundle.keyId(key("TEST-ONLY-b"))), both.keyIds());
        Bundle rotated = Bundle.load(file, List.of(key("TEST-ONLY-b")));
        assertEquals(List.of(Bundle.keyId(key("TEST-ONLY-b"))), rotated.keyIds(), "after a rotation the new key alone verifies it");
        assertEquals("sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data)), both.bundleDigest());

        assertEquals("unknown_key", assertThrows(BundleException.class, () -> Bundle.load(file, List.of(key("TEST-ONLY-c")))).code());
        byte[] changed = data.clone();
        changed[changed.length / 2] ^= 1;
        Files.write(file, changed);
        BundleException tampered = assertThrows(BundleException.class, () -> Bundle.load(file, List.of(key("TEST-ONLY-a"))));
        assertEquals("bad_signature", tampered.code());
        assertTrue(tampered.getMessage().startsWith("bad_signature: "), tampered.getMessage());
        Files.write(file, data); // the byte flipped may break the document: the rest is about the signatures alone
        Files.delete(tmp.resolve("rules.bundle.json.sig.json"));
        assertEquals("unsigned", assertThrows(BundleException.class, () -> Bundle.load(file, List.of(key("TEST-ONLY-a")))).code());
        assertNotNull(Bundle.load(file), "without trusted keys a bundle is read as it is");
    }

    private static byte[] changed(String member, String json) throws IOException {
        JsonObject doc = Spec.read(bundles().resolve("kinds.json"));
        doc.add(member, com.google.gson.JsonParser.parseString(json));
        return doc.toString().getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aBundleOfAnotherFormatOrABrokenOneIsRefused() throws Exception {
        assertEquals("unsupported_format", assertThrows(BundleException.class,
                () -> Bundle.fromBytes(changed("format_version", "2"), null, List.of())).code());
        assertEquals("unsupported_format", assertThrows(BundleException.class,
                () -> Bundle.fromBytes(changed("precedence", "[\"fallback\", \"type_depth\"]"), null, List.of())).code());
        assertEquals("invalid_bundle", assertThrows(BundleException.class,
                () -> Bundle.fromBytes(changed("format", "\"something else\""), null, List.of())).code());
        assertEquals("invalid_bundle", assertThrows(BundleException.class,
                () -> Bundle.fromBytes("{\"format\": ".getBytes(StandardCharsets.UTF_8), null, List.of())).code());
        JsonObject doc = Spec.read(bundles().resolve("kinds.json"));
        JsonObject rule = doc.getAsJsonArray("rules").get(0).getAsJsonObject();
        JsonObject bad = new JsonObject();
        bad.addProperty("kind", "message");
        bad.addProperty("pattern", "(unclosed");
        bad.addProperty("text", "message: (unclosed");
        rule.getAsJsonArray("conditions").add(bad);
        BundleException e = assertThrows(BundleException.class,
                () -> Bundle.fromBytes(doc.toString().getBytes(StandardCharsets.UTF_8), null, List.of()));
        assertEquals("invalid_bundle", e.code());
        assertTrue(e.getMessage().contains(rule.get("id").getAsString()), "the error names the rule: " + e.getMessage());
        JsonObject other = Spec.read(bundles().resolve("kinds.json"));
        JsonObject unknown = new JsonObject();
        unknown.addProperty("kind", "sounds_like");
        other.getAsJsonArray("rules").get(0).getAsJsonObject().getAsJsonArray("conditions").add(unknown);
        assertEquals("unsupported_format", assertThrows(BundleException.class,
                () -> Bundle.fromBytes(other.toString().getBytes(StandardCharsets.UTF_8), null, List.of())).code());
    }

    @Test
    void aKeyThatIsNotEd25519IsRefused() throws Exception {
        PublicKey rsa = KeyPairGenerator.getInstance("RSA").generateKeyPair().getPublic();
        String pem = "-----BEGIN PUBLIC KEY-----\n" + Base64.getMimeEncoder().encodeToString(rsa.getEncoded()) + "\n-----END PUBLIC KEY-----\n";
        assertEquals("invalid_key", assertThrows(BundleException.class, () -> Bundle.publicKey(pem)).code());
        assertEquals("invalid_key", assertThrows(BundleException.class, () -> Bundle.publicKey("not a key")).code());
    }

    @Test
    void aLocalAnswerIsMarkedAndCarriesTheRulesetButNoRetryAfter() throws Exception {
        Bundle bundle = Bundle.load(bundles().resolve("library.json"));
        ExceptionDescriptor d = Descriptors.from(new java.net.SocketTimeoutException("Read timed out"), Origin.ORIGIN_PROVIDER, "openai");
        Classification.Classified answer = bundle.classify(d);
        assertTrue(answer.local());
        assertEquals(bundle.bundleDigest(), answer.bundleDigest());
        assertEquals(bundle.version(), answer.rulesetVersion());
        assertEquals(bundle.digest(), answer.rulesetDigest());
        assertEquals(d, answer.descriptor());
        assertFalse(answer.ruleId().isEmpty(), "the library has a rule for a socket timeout: " + answer);
        assertTrue(answer.retryAfter().isEmpty());
        assertFalse(new Classification.Classified(d, answer.response()).local(), "a service answer is not local");
    }

    @Test
    void aDescriptorTheServiceWouldRefuseIsRefusedWithItsViolations() throws Exception {
        Bundle bundle = Bundle.load(bundles().resolve("kinds.json"));
        InvalidDescriptorException empty = assertThrows(InvalidDescriptorException.class,
                () -> bundle.classify(ExceptionDescriptor.newBuilder().setType(" \u3000").build()));
        assertEquals(List.of("descriptor.type"), empty.violations().stream().map(InvalidDescriptorException.FieldViolation::field).toList());
        ExceptionDescriptor.Builder many = ExceptionDescriptor.newBuilder().setType("T");
        for (int i = 0; i <= Facts.MAX_CAUSES; i++) {
            many.addCauses(Cause.newBuilder().setType("C"));
        }
        assertEquals("descriptor.causes", assertThrows(InvalidDescriptorException.class,
                () -> bundle.classify(many.build())).violations().get(0).field());
        assertThrows(InvalidDescriptorException.class, () -> bundle.classify(ExceptionDescriptor.newBuilder().setType("T").setHttpStatus(42).build()));
        assertThrows(InvalidDescriptorException.class, () -> bundle.classify(ExceptionDescriptor.newBuilder().setType("T").setOriginValue(99).build()));
    }

    @Test
    void oneBundleAnswersFromManyThreadsAsFromOne() throws Exception {
        Bundle bundle = Bundle.load(bundles().resolve("library.json"));
        List<ExceptionDescriptor> descriptors = new ArrayList<>();
        for (JsonElement v : Spec.read(Spec.dir().resolve("vectors").resolve("bundle.library.json")).getAsJsonArray("vectors")) {
            descriptors.add(BundleVectors.descriptor(v.getAsJsonObject().getAsJsonObject("input")));
        }
        List<String> alone = descriptors.stream().map(d -> bundle.classify(d).response().toString()).toList();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<List<String>>> runs = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                runs.add(pool.submit(() -> descriptors.stream().map(d -> bundle.classify(d).response().toString()).toList()));
            }
            for (Future<List<String>> run : runs) {
                assertEquals(alone, run.get(60, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    // ---- the shortcuts in front of re2j ----

    /** Every message pattern of the spec's bundles, and patterns that exercise the syntax the shortcuts read. */
    private static Set<String> patterns() throws IOException {
        Set<String> out = new TreeSet<>(List.of(
                "(?i)kelvin|strasse", "(?i)\\bSKY\\b", "^a.*b.*c$", "(?s)^a.*b$", "x.*y", "\\bword\\b.*end", "^(ab|a)(c|bc)$",
                "[]a-c]x", "[- ]?up", "a{2,3}b", "a{2}", "(?:foo|bar)?baz", "\\.\\*\\+", "^$", "a?", "\u00e9t\u00e9|\uD83D\uDE00+",
                "(?i)top[- ]?up", "\\d{3} - ", "(?i)[k]m", "^x\\b", "q$|^r", "(?U)a.*?b", "a|b|",
                "a\\d+b", "^x\\d{2,}y$", "a.?b", "(?i)a.?b", "a\\s*b", "[0-9.]+s", "a.b", "(?s)a.b", "^.{2}$", "[A-Z]{3}-[0-9]+",
                "\\w+@", "x.*\\d+.*y$", "^\\d*$", "^ab: .*(\\bper (day|month)\\b|\\bretry after [1-9]+)", "(?i)^ab.*\\bcd\\d",
                "(?i)invalid: (x|y.z)", "(?s)^ab.*\\bcd", "\\Bxy\\d", "(?i)\\bkm\\d", "(ab|cd)+e", "x(?i)y", "(?:per|st)\\b", "a\\.b?c\\d$"));
        for (String name : new String[] {"library", "kinds", "precedence", "layers"}) {
            for (JsonElement r : Spec.read(bundles().resolve(name + ".json")).getAsJsonArray("rules")) {
                collect(r.getAsJsonObject().getAsJsonArray("conditions"), out);
            }
        }
        return out;
    }

    private static void collect(JsonArray conditions, Set<String> out) {
        for (JsonElement e : conditions) {
            JsonObject c = e.getAsJsonObject();
            if (c.get("kind").getAsString().equals("message")) {
                out.add(c.get("pattern").getAsString());
            }
            if (c.has("conditions")) {
                collect(c.getAsJsonArray("conditions"), out);
            }
        }
    }

    /** The messages of every bundle vector (descriptors and causes, padded), and messages made around each literal text. */
    private static Set<String> messages(Set<String> patterns) throws IOException {
        Set<String> out = new LinkedHashSet<>();
        for (String file : new String[] {"bundle.json", "bundle.library.json", "bundle.library-rules.json"}) {
            for (JsonElement v : Spec.read(Spec.dir().resolve("vectors").resolve(file)).getAsJsonArray("vectors")) {
                ExceptionDescriptor d = BundleVectors.descriptor(v.getAsJsonObject().getAsJsonObject("input"));
                out.add(Text.cut(Text.wellFormed(d.getMessage()), Facts.MAX_MESSAGE_CHARS));
                d.getCausesList().forEach(c -> out.add(Text.cut(Text.wellFormed(c.getMessage()), Facts.MAX_MESSAGE_CHARS)));
            }
        }
        List<String> texts = new ArrayList<>();
        for (String p : patterns) {
            LiteralPattern literal = LiteralPattern.of(p);
            if (literal != null) {
                texts.addAll(literal.texts());
            }
        }
        for (String t : texts) {
            String upper = t.toUpperCase(Locale.ROOT);
            String kelvin = t.replace('k', '\u212A').replace('s', '\u017F');
            for (String v : List.of(t, upper, kelvin)) {
                for (String around : List.of("%s", "x%s", "%sx", "_%s_", "a %s b", "%s\n", "\n%s", "%s%s", "1%s2")) {
                    out.add(around.replace("%s", v));
                }
            }
        }
        for (int i = 0; i + 1 < texts.size(); i++) {
            String a = texts.get(i);
            String b = texts.get(i + 1);
            out.add(a + b);
            out.add(a + " middle " + b);
            out.add(a + "\n" + b);
            out.add(b + " " + a);
            for (String gap : List.of("12", " 1.5 ", "\uD83D\uDE00", "  ", "\n\n", "x", "_9")) {
                out.add(a + gap + b);
            }
        }
        for (String m : List.of("", "a", "ab", "a1b", "a12b", "a\nb", "a\uD83D\uDE00b", "aXb", "x12y", "x1y", "x123y\n", "12.5s", "ABC-9",
                "abc-9", "AB-9", "user@", "x 1 y", "x\n1 y", "123", "12", "\uD83D\uDE00\uD83D\uDE00", "a \t\n b", "A.B",
                "ab: per day", "ab: x per month", "ab: xper day", "ab:\nper day", "ab: \nper day", "ab: per days", "ab: retry after 5", "AB: per day",
                "ab cd1", "AB\nCD1", "ab xcd1", "ab\u00e9cd1", "invalid: x", "INVALID: Y.Z", "invalid: y\nz", "ab\ncd", "abcd", "xyz xy1", "axy1",
                "\u212Am1", "k\u212Am1", "_km1", "ababe", "cde", "xY", "xy", "per", "per_", "st.", "a.c1", "a.bc1\n", "\u00e9xy1", "\uD83D\uDE00per")) {
            out.add(m);
        }
        return out;
    }

    @Test
    void literalPatternsAndPrefiltersAgreeWithRe2j() throws IOException {
        Set<String> patterns = patterns();
        Set<String> messages = messages(patterns);
        int literal = 0;
        int filtered = 0;
        int searched = 0;
        long compared = 0;
        List<String> wrong = new ArrayList<>();
        for (String p : patterns) {
            Pattern re2j = Pattern.compile(p);
            LiteralPattern exact = LiteralPattern.of(p);
            LiteralPrefilter needs = LiteralPrefilter.of(p);
            LiteralPrefilter.Search search = LiteralPrefilter.Search.of(p);
            literal += exact == null ? 0 : 1;
            searched += search == null ? 0 : 1;
            filtered += needs == null ? 0 : 1;
            for (String m : messages) {
                boolean want = re2j.matcher(m).find();
                String folded = LiteralPrefilter.fold(m);
                if (exact != null && exact.matches(m, folded) != want) {
                    wrong.add("literal " + p + " on " + m + ": want " + want);
                }
                if (search != null && search.find(m, folded) != want) {
                    wrong.add("search " + p + " on " + m + ": want " + want);
                }
                if (needs != null && want && !needs.mayMatch(m, folded)) {
                    wrong.add("prefilter " + p + " (" + needs + ") rejects " + m);
                }
                compared++;
            }
        }
        System.out.printf(Locale.ROOT, "bundle patterns: %d (%d literal, %d prefiltered, %d searched), %d messages, %d comparisons with re2j%n",
                patterns.size(), literal, filtered, searched, messages.size(), compared);
        if (!wrong.isEmpty()) {
            fail(wrong.size() + " disagreements with re2j, first: " + wrong.subList(0, Math.min(10, wrong.size())));
        }
        assertTrue(literal > patterns.size() / 2, "most patterns are decided without re2j");
    }

    @Test
    void whatTheShortcutsDoNotReadIsLeftToRe2j() {
        for (String p : List.of("(?m)^a$", "a(?i)b", "\\pL+", "[^a]b", "a+", "\\x{41}", "(?P<n>a)", "(a.*b)", "(?i)[a-z]+", "(?i)\\w",
                "(ab)+", "a?.*b", "\\b.*x")) {
            assertEquals(null, LiteralPattern.of(p), p);
        }
        for (String p : List.of("a|.*", ".*", "(?i)\u00e9", "x?", "(a|)")) {
            assertEquals(null, LiteralPrefilter.of(p), p);
        }
    }
}
