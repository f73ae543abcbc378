package dev.errorclass.client;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * A bundle's detached signatures (docs/bundles.md, "Signatures"), checked with Java 17's own
 * Ed25519: a bundle is used only when a trusted key's signature over its exact bytes verifies.
 * The verdicts are clients/spec/vectors/bundle_verify.json's.
 */
final class BundleSignatures {
    static final String FORMAT = "errorclass-bundle-signatures";
    private static final String PEM_BEGIN = "-----BEGIN PUBLIC KEY-----";
    private static final String PEM_END = "-----END PUBLIC KEY-----";

    private BundleSignatures() {}

    /** An Ed25519 public key from SubjectPublicKeyInfo PEM ({@code classifier bundle keygen}'s .pub). */
    static PublicKey publicKey(String pem) {
        String text = pem == null ? "" : pem.strip();
        int begin = text.indexOf(PEM_BEGIN);
        int end = text.indexOf(PEM_END);
        if (begin < 0 || end < begin) {
            throw new BundleException("invalid_key", "not a PEM public key (" + PEM_BEGIN + " ... " + PEM_END + ")");
        }
        try {
            byte[] der = Base64.getMimeDecoder().decode(text.substring(begin + PEM_BEGIN.length(), end));
            return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(der));
        } catch (IllegalArgumentException | GeneralSecurityException e) {
            throw new BundleException("invalid_key", "not an Ed25519 SubjectPublicKeyInfo key (" + e.getMessage() + ")");
        }
    }

    /** The first 16 hex digits of SHA-256 over the key's DER SubjectPublicKeyInfo. */
    static String keyId(PublicKey key) {
        return HexFormat.of().formatHex(sha256(key.getEncoded())).substring(0, 16);
    }

    static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /**
     * The ids of the trusted keys whose signatures verify, in the signatures file's order; a
     * {@link BundleException} with the reason ({@code unsigned}, {@code unknown_key}, {@code
     * bad_signature}, {@code malformed_signatures}) when none does.
     */
    static List<String> verify(byte[] bundle, byte[] signatures, List<PublicKey> trusted) {
        List<Entry> entries = entries(signatures);
        if (entries.isEmpty()) {
            throw new BundleException("unsigned", "the bundle has no signature");
        }
        Map<String, List<PublicKey>> byId = new LinkedHashMap<>();
        for (PublicKey key : trusted) {
            byId.computeIfAbsent(keyId(key), id -> new ArrayList<>()).add(key);
        }
        List<String> good = new ArrayList<>();
        List<String> tried = new ArrayList<>();
        for (Entry entry : entries) {
            List<PublicKey> keys = byId.get(entry.keyId());
            if (!entry.algorithm().equals("ed25519") || keys == null) {
                continue; // another key's, or an algorithm this verifier does not know
            }
            tried.add(entry.keyId());
            byte[] raw = base64(entry.signature());
            if (raw == null) {
                continue;
            }
            for (PublicKey key : keys) {
                if (verifies(key, raw, bundle)) {
                    good.add(entry.keyId());
                    break;
                }
            }
        }
        if (!good.isEmpty()) {
            return List.copyOf(good);
        }
        if (!tried.isEmpty()) {
            throw new BundleException("bad_signature", "the signature by trusted key " + String.join(", ", tried)
                    + " does not verify: the bundle changed after it was signed (or the signature did)");
        }
        LinkedHashSet<String> signers = new LinkedHashSet<>();
        entries.forEach(e -> signers.add(e.keyId()));
        throw new BundleException("unknown_key", "signed by " + String.join(", ", signers) + ", none of them trusted");
    }

    private static boolean verifies(PublicKey key, byte[] signature, byte[] data) {
        try {
            Signature verifier = Signature.getInstance("Ed25519");
            verifier.initVerify(key);
            verifier.update(data);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false; // a signature of the wrong length is no signature
        }
    }

    /**
     * Strict base64 (padding required), as the other verifiers read it: Java's decoder would
     * take a signature without its padding that Python's refuses.
     */
    private static byte[] base64(String text) {
        if (text.length() % 4 != 0) {
            return null;
        }
        try {
            return Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private record Entry(String keyId, String algorithm, String signature) {}

    /** The entries of a signatures document; none for no document. */
    private static List<Entry> entries(byte[] signatures) {
        if (signatures == null) {
            return List.of();
        }
        JsonObject doc = Json.object(Json.parse(new String(signatures, StandardCharsets.UTF_8)));
        if (doc == null || !Json.isText(doc.get("format")) || !doc.get("format").getAsString().equals(FORMAT)
                || !isOne(doc.get("format_version"))) {
            throw new BundleException("malformed_signatures", "not a signatures document of format 1 (" + FORMAT + ")");
        }
        JsonElement list = doc.get("signatures");
        if (list == null || !list.isJsonArray()) {
            throw new BundleException("malformed_signatures", "its signatures are not a list");
        }
        List<Entry> out = new ArrayList<>();
        for (JsonElement e : (JsonArray) list) {
            JsonObject entry = Json.object(e);
            if (entry == null || !Json.isText(entry.get("key_id")) || !Json.isText(entry.get("algorithm"))
                    || !Json.isText(entry.get("signature"))) {
                throw new BundleException("malformed_signatures", "an entry's key_id, algorithm and signature are text");
            }
            out.add(new Entry(entry.get("key_id").getAsString(), entry.get("algorithm").getAsString(),
                    entry.get("signature").getAsString()));
        }
        return out;
    }

    private static boolean isOne(JsonElement value) {
        return value != null && value.isJsonPrimitive() && value.getAsJsonPrimitive().isNumber()
                && value.getAsJsonPrimitive().getAsBigDecimal().compareTo(java.math.BigDecimal.ONE) == 0;
    }
}
