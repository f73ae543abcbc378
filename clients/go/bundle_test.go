package errorclass

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// The spec's TEST keys (clients/spec/keys, never to be trusted anywhere) sign bundles
// here as `classifier bundle sign` does: Ed25519 over the file's exact bytes.

func testKey(t *testing.T, name string) (ed25519.PrivateKey, []byte) {
	t.Helper()
	private, err := os.ReadFile(filepath.Join(specDir(), "keys", name+".key"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(private)
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	public, err := os.ReadFile(filepath.Join(specDir(), "keys", name+".pub"))
	if err != nil {
		t.Fatal(err)
	}
	return key.(ed25519.PrivateKey), public
}

func signatures(t *testing.T, bundle []byte, keys ...ed25519.PrivateKey) []byte {
	t.Helper()
	var entries []map[string]string
	for _, key := range keys {
		entries = append(entries, map[string]string{
			"key_id": KeyID(key.Public().(ed25519.PublicKey)), "algorithm": "ed25519",
			"signature": base64.StdEncoding.EncodeToString(ed25519.Sign(key, bundle)),
		})
	}
	data, err := json.Marshal(map[string]any{"format": "errorclass-bundle-signatures", "format_version": 1, "signatures": entries})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// bundleFile copies a spec bundle into a folder of its own, signed by keys (none: no
// signatures file), and returns its path and bytes.
func bundleFile(t *testing.T, name string, keys ...ed25519.PrivateKey) (string, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(specDir(), "bundles", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rules.bundle.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if len(keys) > 0 {
		if err := os.WriteFile(path+".sig.json", signatures(t, data, keys...), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path, data
}

func refusal(t *testing.T, err error) string {
	t.Helper()
	var refused *BundleError
	if !errors.As(err, &refused) {
		t.Fatalf("%v is not a *BundleError", err)
	}
	if !strings.Contains(refused.Error(), refused.Code+": ") {
		t.Fatalf("the message %q does not carry its code", refused.Error())
	}
	return refused.Code
}

func TestASignedBundleLoadsWithTheKeyThatSignedIt(t *testing.T) {
	a, aPublic := testKey(t, "TEST-ONLY-a")
	b, bPublic := testKey(t, "TEST-ONLY-b")
	path, data := bundleFile(t, "library", a, b)
	bundle, err := LoadBundle(path, WithTrustedKeys(bPublic))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if bundle.BundleDigest != "sha256:"+hex.EncodeToString(sum[:]) || len(bundle.KeyIDs) != 1 || bundle.KeyIDs[0] != KeyID(b.Public().(ed25519.PublicKey)) {
		t.Fatalf("digest %s, keys %v", bundle.BundleDigest, bundle.KeyIDs)
	}
	if bundle.Name != "default" || !strings.HasPrefix(bundle.Digest, "sha256:") || bundle.Rules < 400 {
		t.Fatalf("ruleset %s %s %s, %d rules", bundle.Name, bundle.Version, bundle.Digest, bundle.Rules)
	}
	// while keys rotate a runtime trusts both, and each signature that verifies is named
	both, err := LoadBundle(path, WithTrustedKeys(aPublic, bPublic))
	if err != nil || len(both.KeyIDs) != 2 {
		t.Fatalf("%v %v", both, err)
	}
	answer, err := bundle.Classify(&errorclassv1.ExceptionDescriptor{
		Type: "openai.RateLimitError", Supertypes: []string{"openai.APIStatusError", "openai.APIError"},
		HttpStatus: proto.Int32(429), Code: "rate_limit_exceeded", Language: "Python", Provider: " OpenAI ",
		Origin: errorclassv1.Origin_ORIGIN_PROVIDER,
	})
	if err != nil {
		t.Fatal(err)
	}
	if answer.ClassName != "RateLimited" || answer.ErrorClass != errorclassv1.RunErrorClass_RUN_ERROR_CLASS_RATE_LIMITED ||
		answer.Effect != errorclassv1.RunEffect_RUN_EFFECT_FAIL || !answer.Retryable || answer.RuleId == "" ||
		answer.GetAction().GetId() == "" || answer.RulesetVersion != bundle.Version || answer.RulesetDigest != bundle.Digest ||
		!answer.Local || answer.BundleDigest != bundle.BundleDigest {
		t.Fatalf("answer %v local %v %s", answer.ClassifyResponse, answer.Local, answer.BundleDigest)
	}
	if _, said := answer.RetryAfter(); said {
		t.Fatal("a local answer has no retry_after: the service computes it")
	}
}

func TestABundleIsRefusedUnlessATrustedKeySignedItsBytes(t *testing.T) {
	a, aPublic := testKey(t, "TEST-ONLY-a")
	_, bPublic := testKey(t, "TEST-ONLY-b")
	unsigned, _ := bundleFile(t, "kinds")
	if code := refusal(t, second(LoadBundle(unsigned, WithTrustedKeys(aPublic)))); code != BundleUnsigned {
		t.Fatalf("no signatures file: %s", code)
	}
	if b, err := LoadBundle(unsigned); err != nil || b.KeyIDs != nil {
		t.Fatalf("without keys a bundle loads unverified: %v %v", b, err)
	}
	signed, data := bundleFile(t, "kinds", a)
	if code := refusal(t, second(LoadBundle(signed, WithTrustedKeys(bPublic)))); code != BundleUnknownKey {
		t.Fatalf("signed by another key: %s", code)
	}
	tampered := bytes.Replace(data, []byte(`"retryable":false`), []byte(`"retryable":true `), 1)
	if bytes.Equal(tampered, data) {
		t.Fatal("nothing tampered")
	}
	if err := os.WriteFile(signed, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := refusal(t, second(LoadBundle(signed, WithTrustedKeys(aPublic)))); code != BundleBadSignature {
		t.Fatalf("tampered: %s", code)
	}
	// the same from bytes, as GetBundle returns them
	if code := refusal(t, second(ParseBundle(tampered, WithTrustedKeys(aPublic), WithSignatures(signatures(t, data, a))))); code != BundleBadSignature {
		t.Fatalf("tampered bytes: %s", code)
	}
	if _, err := ParseBundle(data, WithTrustedKeys(aPublic), WithSignatures(signatures(t, data, a))); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "sig.json")
	if err := os.WriteFile(elsewhere, []byte(`{"format": "errorclass-bundle-signatures"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := refusal(t, second(LoadBundle(unsigned, WithTrustedKeys(aPublic), WithSignaturesFile(elsewhere)))); code != BundleMalformedSignatures {
		t.Fatalf("a signatures file of no version: %s", code)
	}
	if code := refusal(t, second(LoadBundle(unsigned, WithTrustedKeys(aPublic), WithSignaturesFile(elsewhere+".missing")))); code != BundleUnreadableFile {
		t.Fatalf("a signatures file named and missing: %s", code)
	}
}

func second[T any](_ T, err error) error { return err }

func TestKeysThatAreNotEd25519PublicKeysAreRefused(t *testing.T) {
	path, _ := bundleFile(t, "kinds")
	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	private, _ := os.ReadFile(filepath.Join(specDir(), "keys", "TEST-ONLY-a.key"))
	for name, key := range map[string][]byte{
		"not PEM":     []byte("ssh-ed25519 AAAA"),
		"an RSA key":  pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}),
		"private key": private,
		"bad DER":     pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1, 2, 3}}),
	} {
		if code := refusal(t, second(LoadBundle(path, WithTrustedKeys(key)))); code != BundleInvalidKey {
			t.Errorf("%s: %s", name, code)
		}
	}
	if code := refusal(t, second(LoadBundle(filepath.Join(t.TempDir(), "none.json")))); code != BundleUnreadableFile {
		t.Fatalf("a missing bundle: %s", code)
	}
}

func TestABundleOfAnotherFormatOrPrecedenceIsRefused(t *testing.T) {
	_, data := bundleFile(t, "kinds")
	for _, c := range []struct{ name, old, new, code string }{
		{"a newer format version", `"format_version": 1`, `"format_version": 2`, BundleUnsupportedFormat},
		{"another precedence", `"precedence": ["decisive","fallback",`, `"precedence": ["fallback","decisive",`, BundleUnsupportedFormat},
		{"another normalisation", `"stripped":["type",`, `"stripped":["message","type",`, BundleUnsupportedFormat},
		{"a label lower-cased that is not", `"lower_cased":["language"`, `"lower_cased":["code"`, BundleUnsupportedFormat},
		{"a condition kind", `"kind":"present"`, `"kind":"absent"`, BundleUnsupportedFormat},
		{"another format", `"format": "errorclass-bundle"`, `"format": "opa-bundle"`, BundleInvalid},
		{"a pattern RE2 refuses", `"kind":"message","pattern":"`, `"kind":"message","pattern":"(?<=x)`, BundleInvalid},
		{"an unknown effect", `"effect":"fail","retryable":true,`, `"effect":"explode","retryable":true,`, BundleInvalid},
		{"a negative cap on a wait", `"retry_after_cap_seconds":30.0`, `"retry_after_cap_seconds":-1`, BundleInvalid},
		{"not JSON", `{`, `[`, BundleInvalid},
	} {
		changed := bytes.Replace(data, []byte(c.old), []byte(c.new), 1)
		if bytes.Equal(changed, data) {
			t.Fatalf("%s: %s is not in the bundle", c.name, c.old)
		}
		if code := refusal(t, second(ParseBundle(changed))); code != c.code {
			t.Errorf("%s: %s, want %s", c.name, code, c.code)
		}
	}
}

func TestADescriptorTheServiceRefusesIsRefusedNamingItsFields(t *testing.T) {
	bundle := specBundle(t, "library")
	for _, c := range []struct {
		d      *errorclassv1.ExceptionDescriptor
		fields []string
	}{
		{&errorclassv1.ExceptionDescriptor{Type: " \u3000"}, []string{"descriptor.type"}},
		{&errorclassv1.ExceptionDescriptor{Type: "E", Supertypes: []string{"A", ""}, HttpStatus: proto.Int32(700)},
			[]string{"descriptor.supertypes[1]", "descriptor.http_status"}},
		{&errorclassv1.ExceptionDescriptor{Type: "E", Causes: []*errorclassv1.Cause{{Type: "C"}, {Code: "x"}}, GrpcStatus: proto.Int32(17)},
			[]string{"descriptor.grpc_status", "descriptor.causes[1].type"}},
		{&errorclassv1.ExceptionDescriptor{Type: "E", Causes: make([]*errorclassv1.Cause, MaxCauses+1)}, []string{"descriptor.causes"}},
		{&errorclassv1.ExceptionDescriptor{Type: "E", Code: strings.Repeat("c", MaxCodeChars+1), Provider: strings.Repeat("p", MaxLabelChars+1)},
			[]string{"descriptor.code", "descriptor.provider"}},
		{&errorclassv1.ExceptionDescriptor{Type: "E", Attributes: map[string]string{"": "x"}, Origin: 99},
			[]string{"descriptor.origin", "descriptor.attributes"}},
	} {
		_, err := bundle.Classify(c.d)
		var refused *DescriptorError
		if !errors.As(err, &refused) {
			t.Fatalf("%v: %v", c.d, err)
		}
		var fields []string
		for _, v := range refused.Violations {
			fields = append(fields, v.Field)
		}
		if strings.Join(fields, " ") != strings.Join(c.fields, " ") {
			t.Errorf("%v: refused %v, want %v", c.d, fields, c.fields)
		}
		// the service names the same fields (Validate is its rules, without a call)
		if _, violations := Validate(c.d); len(violations) != len(refused.Violations) {
			t.Errorf("%v: Validate names %v", c.d, violations)
		}
	}
	// the builders' descriptors are never refused: Fit cuts them to the limits
	long := &errorclassv1.ExceptionDescriptor{Type: strings.Repeat("T", 2000), Message: strings.Repeat("m", 10000), Provider: "  OpenAI  "}
	if _, err := bundle.Classify(Fit(long)); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Classify(nil); err == nil {
		t.Fatal("a nil descriptor has no type")
	}
}

func TestABundleAnswersTheSameFromManyGoroutines(t *testing.T) {
	bundle := specBundle(t, "library")
	descriptors := benchmarkDescriptors(t)
	want := make([]string, len(descriptors))
	for i, d := range descriptors {
		answer, err := bundle.Classify(d)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = answer.ClassName + " " + answer.RuleId
	}
	var wg sync.WaitGroup
	failures := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			for i, d := range descriptors {
				answer, _ := bundle.Classify(d)
				if got := answer.ClassName + " " + answer.RuleId; got != want[i] {
					select {
					case failures <- got + " != " + want[i]:
					default:
					}
					return
				}
			}
		})
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
}

// benchmarkDescriptors are the descriptors of the library's bundle vectors (its cases,
// the public corpus, the conformance suite's SDK types): what runtimes send.
func benchmarkDescriptors(tb testing.TB) []*errorclassv1.ExceptionDescriptor {
	tb.Helper()
	file := readVectorFile(tb, filepath.Join(specDir(), "vectors", "bundle.library.json"))
	out := make([]*errorclassv1.ExceptionDescriptor, 0, len(file.Vectors))
	for _, v := range file.Vectors {
		if text(v.Input["bundle"]) == "library" {
			out = append(out, bundleDescriptor(tb, v))
		}
	}
	if len(out) == 0 {
		tb.Fatal("no library vectors")
	}
	return out
}

// BenchmarkBundleClassify is the mean cost of one evaluation on the bundled library (go
// test -bench BundleClassify); `make bench` prints the percentiles (internal/bench).
func BenchmarkBundleClassify(b *testing.B) {
	bundle, err := LoadBundle(filepath.Join(specDir(), "bundles", "library.json"))
	if err != nil {
		b.Fatal(err)
	}
	descriptors := benchmarkDescriptors(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := bundle.Classify(descriptors[i%len(descriptors)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// TestPrefiltersDecideAsTheRegexpDoes runs every pattern of the spec's bundles, through
// its prefilter and through its regexp, on every message of the bundle vectors and on
// texts made of the pattern's own literals (upper-cased, with the Kelvin sign for k and
// the long s for s, with a byte that is not UTF-8): a prefilter that decides otherwise
// than the regexp fails.
func TestPrefiltersDecideAsTheRegexpDoes(t *testing.T) {
	patterns := map[string]bool{}
	var collect func(conditions []any)
	collect = func(conditions []any) {
		for _, c := range conditions {
			c := c.(map[string]any)
			if c["kind"] == "message" {
				patterns[c["pattern"].(string)] = true
			}
			if inner, ok := c["conditions"].([]any); ok {
				collect(inner)
			}
		}
	}
	for _, name := range []string{"library", "kinds", "precedence", "layers"} {
		data, err := os.ReadFile(filepath.Join(specDir(), "bundles", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Rules []map[string]any }
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for _, r := range doc.Rules {
			conditions, _ := r["conditions"].([]any)
			collect(conditions)
		}
	}
	// and shapes the bundles do not have yet: repetitions, optional parts, classes, folds
	for _, pattern := range []string{
		`ab{2}c`, `^ab{2}c`, `(?i)ha{3}!`, `(?i)\bha{3}!`, `colou?r`, `(foo|bar)+baz`, `^a.*b$`, `\bquota\b`, `(?i)top[- ]?up`,
		`(?i)\x{17F}top`, `[0-9]+ tokens`, `(?i)(x|y)z`, `caf\x{E9}{2}`, `(?i)k(ill)?`, `a(?i:b)c`, `(a|)b`,
		// word boundaries: around literals (folded or not, anchored or not), and not
		`\bquota`, `quota\b`, `^\bquota\b$`, `\b: x\b`, `(?i)\bkb\b`, `(?i)\bper (day|month)\b|PerDay|\bretry after [1-9][0-9]{4,} s\b`,
		`(?i)\b(daily|monthly) (limit|quota)|\bask\b`, `\b_x_\b|\b1\b`, `(?i)\b\x{E9}t\x{E9}\b`, `\ba\b\b`, `\b(a|\bb)`,
		// searched from a first literal
		`(?i)invalid sk: (a|b)`, `\bask\d*`, `(?i)kas\w+`, `ask\b.*sk$`, `(?m)sk$\n?^ks`, `(?i)s\bk`, `(?s)ask.k`, `\x{E9}t\x{E9}\B`, `(?i)ask\B`,
		`(?i)\bsk(?-i:K)`, `\Bask`, `(?U)sk.+?k`, `sk(a|b)+k?\b`,
		`^ab: .*(\bper (day|month)\b|\b(daily|monthly) sk|\bretry after [1-9][0-9]{4,} s\b)`, `^ab: (?s:.*)sk`, `^ab: .*\bsk`, `^ab: .*\Bsk`,
		`^ab.*k`, `(?i)\b(sk|ks)x`, `\Bsk\d`, `^ab: .*(sk|^x)`, `x(?m:^)sk`, `^ab: .*?(?i)sk`, `^(?i:ab): .*sk`, `(?i)(sk)+|ks{2,}`,
	} {
		patterns[pattern] = true
	}
	messages := map[string]bool{}
	paths, _ := filepath.Glob(filepath.Join(specDir(), "vectors", "bundle*.json"))
	for _, path := range paths {
		file := readVectorFile(t, path)
		if file.Kind != "bundle" {
			continue
		}
		for _, v := range file.Vectors {
			d := bundleDescriptor(t, v)
			messages[d.Message] = true
			for _, c := range d.Causes {
				messages[c.Message] = true
			}
		}
	}
	kelvin := strings.NewReplacer("k", "\u212a", "K", "\u212a", "s", "\u017f", "S", "\u017f")
	filtered, exact, sure, rests, searches := 0, 0, 0, 0, 0
	for pattern := range patterns {
		re := regexp.MustCompile(pattern)
		filter := newPrefilter(pattern)
		if filter == nil {
			continue
		}
		filtered++
		if filter.exact {
			exact++
		}
		if filter.sure != nil {
			sure++
		}
		if filter.rest != nil {
			rests++
		}
		if filter.whole != nil {
			searches++
		}
		texts := []string{}
		var literals func(n *filterNode)
		literals = func(n *filterNode) {
			if n == nil {
				return
			}
			if n.op == filterLiteral {
				for _, text := range []string{n.lit.text, strings.ToUpper(n.lit.text), kelvin.Replace(n.lit.text)} {
					texts = append(texts, text, "x "+text+" y", "\xff"+text, text[:len(text)/2]+"\xff"+text[len(text)/2:],
						"a"+text, text+"_", "9"+text+"Z", text+text, "a"+text+" "+text, text+"a "+text, "\u212a"+text+"\u017f")
				}
			}
			for _, sub := range n.subs {
				literals(sub)
			}
		}
		literals(filter.sure)
		literals(filter.root)
		for _, search := range []*search{filter.rest, filter.whole} {
			if search != nil && search.anchored != nil {
				for _, lit := range search.firsts {
					literals(&filterNode{op: filterLiteral, lit: lit})
				}
			}
		}
		// a case-sensitive part after a case-folded literal
		texts = append(texts, "skK", "a skK", "SKk", "sk\u212a", "SKK", "x_skK y")
		// after a pattern's ^L.* : on L's line, on the next, right after L
		for _, search := range []*search{filter.rest, filter.whole} {
			if search != nil && search.prefix != "" {
				for _, text := range slices.Clone(texts) {
					texts = append(texts, search.prefix+text, search.prefix+"\n"+text, search.prefix+"x\n"+text, search.prefix+"_"+text, search.prefix[:len(search.prefix)-1])
				}
			}
		}
		all := strings.Join(texts, " ")
		texts = append(texts, all, strings.ToUpper(all), kelvin.Replace(all))
		for m := range messages {
			texts = append(texts, m)
		}
		for _, text := range texts {
			folded := ""
			match, decided := filter.decide(text, &folded)
			if decided && match != re.MatchString(text) {
				t.Errorf("the prefilter of %q says %v for %+q, the regexp %v", pattern, match, cut(text, 200), !match)
			}
			if folded = ""; filter.matches(text, &folded, re) != re.MatchString(text) {
				t.Errorf("the prefilter of %q with its regexp of the rest (%v) says otherwise than the regexp for %+q", pattern, filter.rest, cut(text, 200))
			}
			if filter.rest != nil && filter.rest.re.MatchString(text) && !re.MatchString(text) {
				t.Errorf("the regexp of the rest of %q (%v) matches %+q, the pattern does not", pattern, filter.rest.re, cut(text, 200))
			}
			for _, search := range []*search{filter.rest, filter.whole} {
				if folded = ""; search != nil && search.match(text, &folded) != search.re.MatchString(text) {
					t.Errorf("the search from %v (after %q) of %v says otherwise than its regexp for %+q", search.firsts, search.prefix, search.re, cut(text, 200))
				}
			}
			if filter.whole != nil && filter.whole.re.MatchString(text) != re.MatchString(text) {
				t.Errorf("%q compiled from its syntax (%v) says otherwise for %+q", pattern, filter.whole.re, cut(text, 200))
			}
		}
	}
	if filtered < len(patterns)*3/4 || exact == 0 || sure <= exact {
		t.Fatalf("%d of %d patterns have a prefilter, %d exact, %d with sure literals", filtered, len(patterns), exact, sure)
	}
	t.Logf("%d patterns, %d with a prefilter (%d exact, %d with sure literals, %d with a regexp of the rest, %d searched from their first literal), on %d messages", len(patterns), filtered, exact, sure, rests, searches, len(messages))
}

// TestFoldASCIILowersASCIILettersAndWhatFoldsToThem: the fold the prefilters read (a run
// at a time, the text itself when nothing changes).
func TestFoldASCIILowersASCIILettersAndWhatFoldsToThem(t *testing.T) {
	for text, want := range map[string]string{
		"": "", "abc 1_": "abc 1_", "AbC": "abc", "\u212aelvin \u017fign": "kelvin sign", "\xffA\xe2\x84": "\xffa\xe2\x84",
		"\xe2\x84\xaaK": "kk", "ÀÉ Z": "ÀÉ z", "x\u212aY\u017fZ": "xkysz", "tail \u212a": "tail k", "É": "É",
	} {
		if got := foldASCII(text); got != want {
			t.Errorf("foldASCII(%+q) = %+q, want %+q", text, got, want)
		}
	}
}
