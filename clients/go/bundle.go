package errorclass

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// A bundle (docs/bundles.md) is the service's compiled ruleset as one JSON document,
// built by `classifier bundle build` and signed by `classifier bundle sign`. LoadBundle
// and ParseBundle read one, verified against the operator's public keys when they are
// given, and Bundle.Classify answers in process exactly as the service answers for the
// same descriptor (the spec's bundle vectors prove it).

// The codes of a BundleError, stable and the same in every client (docs/bundles.md).
const (
	// BundleUnsigned: keys were given and the bundle has no signature (or no signatures file).
	BundleUnsigned = "unsigned"
	// BundleUnknownKey: every signature is by a key that is not trusted.
	BundleUnknownKey = "unknown_key"
	// BundleBadSignature: a trusted key signed, and no such signature verifies (a byte changed).
	BundleBadSignature = "bad_signature"
	// BundleMalformedSignatures: the signatures file is not a signatures document.
	BundleMalformedSignatures = "malformed_signatures"
	// BundleInvalid: the document is not a ruleset bundle (or a pattern of it does not compile).
	BundleInvalid = "invalid_bundle"
	// BundleUnsupportedFormat: a format version, precedence, normalisation or condition
	// this evaluator does not know; a newer classifier built it.
	BundleUnsupportedFormat = "unsupported_format"
	// BundleInvalidKey: a trusted key is not an Ed25519 public key in PEM
	// (SubjectPublicKeyInfo).
	BundleInvalidKey = "invalid_key"
	// BundleUnreadableFile: the bundle, its signatures or a key file cannot be read.
	BundleUnreadableFile = "unreadable_file"
)

// BundleError is a bundle this client will not use, with a stable Code (BundleUnsigned,
// BundleBadSignature, ...). Keep using the bundle you had when a new one is refused.
type BundleError struct {
	Code    string
	Message string
	Err     error // the underlying error, when there is one (a file's, a parser's)
}

func (e *BundleError) Error() string {
	return "errorclass: bundle: " + e.Code + ": " + e.Message
}

func (e *BundleError) Unwrap() error { return e.Err }

func bundleError(code, format string, args ...any) *BundleError {
	return &BundleError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// BundleOption configures LoadBundle and ParseBundle.
type BundleOption interface {
	applyBundle(*bundleConfig)
}

type bundleConfig struct {
	keys       [][]byte // PEM
	signatures []byte
	sigGiven   bool
	sigPath    string
}

type bundleOption func(*bundleConfig)

func (f bundleOption) applyBundle(c *bundleConfig) { f(c) }

// WithTrustedKeys makes the bundle usable only when one of these public keys (PEM,
// SubjectPublicKeyInfo, as `classifier bundle keygen` writes them) signed its exact
// bytes. Give the old and the new key while keys rotate. Without it, a bundle is loaded
// unverified.
func WithTrustedKeys(pems ...[]byte) BundleOption {
	return bundleOption(func(c *bundleConfig) { c.keys = append(c.keys, pems...) })
}

// WithSignatures gives the signatures document (BUNDLE.sig.json's bytes, as GetBundle
// returns them; nil: none). LoadBundle reads the file beside the bundle unless given.
func WithSignatures(signatures []byte) BundleOption {
	return bundleOption(func(c *bundleConfig) { c.signatures, c.sigGiven = signatures, true })
}

// WithSignaturesFile reads the signatures document from path instead of the file beside
// the bundle (BUNDLE.sig.json).
func WithSignaturesFile(path string) BundleOption {
	return bundleOption(func(c *bundleConfig) { c.sigPath = path })
}

// LoadBundle reads a bundle file (`classifier bundle build -o FILE`). With
// WithTrustedKeys it is verified first against its signatures, by default the file beside
// it (FILE.sig.json; none is BundleUnsigned). Every refusal is a *BundleError.
func LoadBundle(path string, opts ...BundleOption) (*Bundle, error) {
	config := newBundleConfig(opts)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &BundleError{Code: BundleUnreadableFile, Message: err.Error(), Err: err}
	}
	if len(config.keys) > 0 && !config.sigGiven {
		sigPath := config.sigPath
		if sigPath == "" {
			sigPath = path + ".sig.json"
		}
		signatures, err := os.ReadFile(sigPath)
		switch {
		case err == nil:
			config.signatures = signatures
		case errors.Is(err, fs.ErrNotExist) && config.sigPath == "":
			config.signatures = nil // no signatures file beside it: unsigned
		default:
			return nil, &BundleError{Code: BundleUnreadableFile, Message: err.Error(), Err: err}
		}
	}
	return parseBundle(data, config)
}

// ParseBundle reads a bundle from its bytes (as GetBundle returns them). With
// WithTrustedKeys it is verified against WithSignatures' document first.
func ParseBundle(data []byte, opts ...BundleOption) (*Bundle, error) {
	return parseBundle(data, newBundleConfig(opts))
}

func newBundleConfig(opts []BundleOption) *bundleConfig {
	c := &bundleConfig{}
	for _, opt := range opts {
		if opt != nil {
			opt.applyBundle(c)
		}
	}
	return c
}

func parseBundle(data []byte, config *bundleConfig) (*Bundle, error) {
	var keyIDs []string
	if len(config.keys) > 0 {
		keys := make([]ed25519.PublicKey, 0, len(config.keys))
		for _, p := range config.keys {
			key, err := ParsePublicKey(p)
			if err != nil {
				return nil, err
			}
			keys = append(keys, key)
		}
		var err error
		if keyIDs, err = VerifyBundle(data, config.signatures, keys); err != nil {
			return nil, err
		}
	}
	b, err := compileBundle(data)
	if err != nil {
		return nil, err
	}
	b.KeyIDs = keyIDs
	return b, nil
}

// ParsePublicKey reads an Ed25519 public key from PEM (SubjectPublicKeyInfo, "PUBLIC
// KEY"), as `classifier bundle keygen` writes it; anything else is a BundleInvalidKey.
func ParsePublicKey(data []byte) (ed25519.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, bundleError(BundleInvalidKey, "not a PEM public key (-----BEGIN PUBLIC KEY-----)")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, &BundleError{Code: BundleInvalidKey, Message: err.Error(), Err: err}
	}
	ed, ok := key.(ed25519.PublicKey)
	if !ok {
		return nil, bundleError(BundleInvalidKey, "a %T, not an Ed25519 public key", key)
	}
	return ed, nil
}

// KeyID is the key's id as signatures name it: the first 16 hex digits of SHA-256 over
// its DER SubjectPublicKeyInfo. It only picks the key to check with; trust is in the key.
func KeyID(key ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil { // only for a key of the wrong length
		return ""
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:8])
}

// VerifyBundle checks a bundle's bytes against its signatures document (nil: none) and
// the trusted keys: the ids of the trusted keys whose Ed25519 signature verifies, in the
// document's order; or a *BundleError: BundleUnsigned (no signature),
// BundleUnknownKey (no signature by a trusted key), BundleBadSignature (a trusted key's
// signature that does not verify: the bytes changed), BundleMalformedSignatures.
// Entries by other keys, or of an algorithm other than ed25519, are skipped.
func VerifyBundle(bundle, signatures []byte, trusted []ed25519.PublicKey) ([]string, error) {
	entries, err := signatureEntries(signatures)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, bundleError(BundleUnsigned, "the bundle has no signature")
	}
	byID := map[string][]ed25519.PublicKey{}
	for _, key := range trusted {
		id := KeyID(key)
		byID[id] = append(byID[id], key)
	}
	var good, tried, signers []string
	for _, e := range entries {
		signers = append(signers, e.KeyID)
		keys := byID[e.KeyID]
		if e.Algorithm != "ed25519" || len(keys) == 0 {
			continue
		}
		tried = append(tried, e.KeyID)
		raw, err := base64.StdEncoding.Strict().DecodeString(e.Signature)
		if err != nil {
			continue
		}
		for _, key := range keys {
			if len(key) == ed25519.PublicKeySize && ed25519.Verify(key, bundle, raw) {
				good = append(good, e.KeyID)
				break
			}
		}
	}
	switch {
	case len(good) > 0:
		return good, nil
	case len(tried) > 0:
		return nil, bundleError(BundleBadSignature, "the signature by trusted key %s does not verify: "+
			"the bundle changed after it was signed (or the signature did)", strings.Join(tried, ", "))
	}
	return nil, bundleError(BundleUnknownKey, "signed by %s, none of them trusted", strings.Join(distinct(signers), ", "))
}

type signatureEntry struct {
	KeyID     string
	Algorithm string
	Signature string
}

// signatureEntries are a signatures document's entries (none for nil), or
// BundleMalformedSignatures.
func signatureEntries(data []byte) ([]signatureEntry, error) {
	if data == nil {
		return nil, nil
	}
	malformed := func(why string) error {
		return bundleError(BundleMalformedSignatures, "not a signatures document (%s)", why)
	}
	value, ok := parseJSON(data)
	doc, _ := value.(map[string]any)
	if !ok || doc == nil {
		return nil, malformed("not a JSON object")
	}
	version, _ := doc["format_version"].(json.Number)
	if n, err := version.Float64(); doc["format"] != "errorclass-bundle-signatures" || err != nil || n != 1 {
		return nil, malformed("not a signatures document of format 1")
	}
	list, ok := doc["signatures"].([]any)
	if !ok {
		return nil, malformed("signatures is not a list")
	}
	out := make([]signatureEntry, 0, len(list))
	for _, item := range list {
		entry, _ := item.(map[string]any)
		keyID, ok1 := entry["key_id"].(string)
		algorithm, ok2 := entry["algorithm"].(string)
		signature, ok3 := entry["signature"].(string)
		if !ok1 || !ok2 || !ok3 {
			return nil, malformed("an entry's key_id, algorithm and signature are text")
		}
		out = append(out, signatureEntry{KeyID: keyID, Algorithm: algorithm, Signature: signature})
	}
	return out, nil
}

func distinct(texts []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range texts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
