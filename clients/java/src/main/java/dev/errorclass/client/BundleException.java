package dev.errorclass.client;

/**
 * A bundle this client will not use, with a stable {@link #code()} (docs/bundles.md), the same
 * in every errorclass client:
 *
 * <ul>
 *   <li>verification: {@code unsigned} (no signature, or no signatures file), {@code
 *       unknown_key} (signed only by keys not trusted), {@code bad_signature} (a trusted key's
 *       signature does not verify: the bundle changed after it was signed), {@code
 *       malformed_signatures} (the signatures file is not a signatures document);
 *   <li>the document: {@code invalid_bundle} (not a bundle, or a broken one), {@code
 *       unsupported_format} (a format version, precedence or normalisation this evaluator does
 *       not implement);
 *   <li>a trusted key: {@code invalid_key} (not an Ed25519 SubjectPublicKeyInfo PEM key).
 * </ul>
 *
 * <p>A runtime that is refused a new bundle keeps the one it has.
 */
public final class BundleException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String code;

    BundleException(String code, String message) {
        super(code + ": " + message);
        this.code = code;
    }

    /** Why the bundle was refused: {@code unsigned}, {@code unknown_key}, {@code bad_signature}, ... */
    public String code() {
        return code;
    }
}
