package errorclass

// TestVectors runs every vector file of the clients' shared spec (clients/spec/vectors,
// or the folder ERRORCLASS_SPEC_DIR names) through the functions the builders and the
// client use, so that the Go client reads a body, a finish reason or a limit as every
// other client does. Alone:
//
//	cd clients/go && ERRORCLASS_SPEC_DIR=/path/to/spec go test -run TestVectors -v ./...
//
// It fails on a file of a kind it does not know, names each failing vector by file,
// name and field, and logs how many vectors of each kind it ran ("vectors: error_body 36").

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

type vectorFile struct {
	Kind    string   `json:"kind"`
	Vectors []vector `json:"vectors"`
}

type vector struct {
	Name  string         `json:"name"`
	Note  string         `json:"note"`
	Input map[string]any `json:"input"`
	Want  map[string]any `json:"want"`
}

// runners are the kinds this client knows: each returns what the client makes of the
// vector's input, spelt as the vectors spell it, to compare with `want`.
var runners = map[string]func(t *testing.T, v vector) map[string]any{
	"error_body":    errorBodyVector,
	"stream_error":  streamErrorVector,
	"finish_reason": finishReasonVector,
	"response":      responseVector,
	"runtime_facts": runtimeFactsVector,
	"validate":      validateVector,
	"fit":           fitVector,
	"breaker":       breakerVector,
	"outage":        outageVector,
	"bundle":        bundleVector,
	"bundle_verify": bundleVerifyVector,
	"retry_after":   retryAfterVector,
}

// inline are the kinds with thousands of vectors: run in one loop, not a subtest each.
var inline = map[string]bool{"bundle": true}

func specDir() string {
	if dir := os.Getenv("ERRORCLASS_SPEC_DIR"); dir != "" {
		return dir
	}
	return filepath.Join("..", "spec")
}

func readVectorFile(t testing.TB, path string) vectorFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	var file vectorFile
	if err := decoder.Decode(&file); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return file
}

func TestVectors(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(specDir(), "vectors", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no vector files in %s (ERRORCLASS_SPEC_DIR): %v", filepath.Join(specDir(), "vectors"), err)
	}
	ran := map[string]int{}
	for _, path := range paths {
		file := readVectorFile(t, path)
		run, known := runners[file.Kind]
		if !known {
			t.Errorf("%s: kind %q is unknown to the Go runner", filepath.Base(path), file.Kind)
			continue
		}
		for _, v := range file.Vectors {
			check := func(t *testing.T) {
				got := run(t, v)
				if got == nil { // the runner asserted want itself (outage)
					return
				}
				for _, problem := range differences(file.Kind, v.Want, got) {
					t.Errorf("%s %s: %s", filepath.Base(path), v.Name, problem)
				}
			}
			if inline[file.Kind] {
				check(t)
			} else {
				t.Run(filepath.Base(path)+"/"+v.Name, check)
			}
			ran[file.Kind]++
		}
	}
	kinds := make([]string, 0, len(ran))
	for kind := range ran {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		t.Logf("vectors: %s %d", kind, ran[kind])
	}
}

// differences compares got with want as the spec README says: absent keys of want are
// the empty value; validate's violations by their field paths, as a set; breaker's
// probe waits only when want gives them.
func differences(kind string, want, got map[string]any) []string {
	want, got = pruned(normal(want)).(map[string]any), pruned(normal(got)).(map[string]any)
	if want == nil {
		want = map[string]any{}
	}
	if got == nil {
		got = map[string]any{}
	}
	if kind == "validate" {
		want["violations"], got["violations"] = violationFields(want["violations"]), violationFields(got["violations"])
	}
	if _, given := want["probe_waits_ms"]; kind == "breaker" && !given {
		delete(got, "probe_waits_ms")
	}
	for _, side := range []map[string]any{want, got} {
		if wait, ok := side["retry_after"].(map[string]any); ok {
			wait["seconds"] = asDouble(wait["seconds"])
		}
	}
	var out []string
	diff("", want, got, &out)
	return out
}

// asDouble is a wait's seconds as a double: the spec compares them so (Python writes 20.0
// where Go writes 20).
func asDouble(v any) any {
	if n, ok := v.(json.Number); ok {
		if f, err := n.Float64(); err == nil {
			return f
		}
	}
	return v
}

// diff names every field where got differs from want.
func diff(path string, want, got any, out *[]string) {
	wantMap, wantIsMap := want.(map[string]any)
	gotMap, gotIsMap := got.(map[string]any)
	if wantIsMap && gotIsMap {
		keys := map[string]bool{}
		for k := range wantMap {
			keys[k] = true
		}
		for k := range gotMap {
			keys[k] = true
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range keys {
				if !yield(k) {
					return
				}
			}
		}) {
			diff(strings.TrimPrefix(path+"."+k, "."), wantMap[k], gotMap[k], out)
		}
		return
	}
	if !reflect.DeepEqual(want, got) {
		*out = append(*out, fmt.Sprintf("field %s: got %s, want %s", path, short(got), short(want)))
	}
}

// short is v as JSON, a long text cut, with its length in characters.
func short(v any) string {
	data, _ := json.Marshal(v)
	if s, ok := v.(string); ok && len(data) > 120 {
		return fmt.Sprintf("%s... (%d characters)", data[:120], chars(s))
	}
	if len(data) > 300 {
		return string(data[:300]) + "..."
	}
	return string(data)
}

// normal is v through JSON, numbers as json.Number, so both sides compare alike.
func normal(v map[string]any) any {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	var out any
	if err := decoder.Decode(&out); err != nil {
		panic(err)
	}
	return out
}

// pruned leaves out of maps the keys whose value is empty ("", null, {}, []).
func pruned(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, value := range x {
			value = pruned(value)
			switch y := value.(type) {
			case nil:
				continue
			case string:
				if y == "" {
					continue
				}
			case map[string]any:
				if len(y) == 0 {
					continue
				}
			case []any:
				if len(y) == 0 {
					continue
				}
			}
			out[k] = value
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, value := range x {
			out[i] = pruned(value)
		}
		return out
	}
	return v
}

func violationFields(v any) any {
	list, _ := v.([]any)
	if len(list) == 0 {
		return nil
	}
	var fields []string
	for _, item := range list {
		fields = append(fields, fmt.Sprint(item.(map[string]any)["field"]))
	}
	sort.Strings(fields)
	out := make([]any, len(fields))
	for i, f := range fields {
		out[i] = f
	}
	return out
}

// The vectors' spelling of a descriptor: the proto's field names, empty fields left
// out, origin by name, statuses by number.

func descriptorFromVector(t testing.TB, data any) *errorclassv1.ExceptionDescriptor {
	t.Helper()
	fields, ok := data.(map[string]any)
	if !ok {
		t.Fatalf("a descriptor is an object: %v", data)
	}
	d := &errorclassv1.ExceptionDescriptor{
		Type:       text(fields["type"]),
		Supertypes: texts(fields["supertypes"]),
		HttpStatus: int32Of(t, fields["http_status"]),
		GrpcStatus: int32Of(t, fields["grpc_status"]),
		Code:       text(fields["code"]),
		Message:    text(fields["message"]),
		Language:   text(fields["language"]),
		Provider:   text(fields["provider"]),
	}
	if name, given := fields["origin"].(string); given {
		origin, err := ParseOrigin(name)
		if err != nil {
			t.Fatal(err)
		}
		d.Origin = origin
	}
	if attributes, given := fields["attributes"].(map[string]any); given {
		d.Attributes = map[string]string{}
		for k, v := range attributes {
			d.Attributes[k] = text(v)
		}
	}
	causes, _ := fields["causes"].([]any)
	for _, item := range causes {
		c := item.(map[string]any)
		d.Causes = append(d.Causes, &errorclassv1.Cause{
			Type:       text(c["type"]),
			Supertypes: texts(c["supertypes"]),
			HttpStatus: int32Of(t, c["http_status"]),
			GrpcStatus: int32Of(t, c["grpc_status"]),
			Code:       text(c["code"]),
			Message:    text(c["message"]),
		})
	}
	return d
}

func vectorFields(d *errorclassv1.ExceptionDescriptor) map[string]any {
	if d == nil {
		return nil
	}
	out := map[string]any{
		"type": d.Type, "supertypes": d.Supertypes, "code": d.Code, "message": d.Message,
		"language": d.Language, "provider": d.Provider, "attributes": d.Attributes,
	}
	if d.HttpStatus != nil {
		out["http_status"] = *d.HttpStatus
	}
	if d.GrpcStatus != nil {
		out["grpc_status"] = *d.GrpcStatus
	}
	if d.Origin != errorclassv1.Origin_ORIGIN_UNSPECIFIED {
		out["origin"] = OriginName(d.Origin)
	}
	var causes []any
	for _, c := range d.Causes {
		cause := map[string]any{"type": c.Type, "supertypes": c.Supertypes, "code": c.Code, "message": c.Message}
		if c.HttpStatus != nil {
			cause["http_status"] = *c.HttpStatus
		}
		if c.GrpcStatus != nil {
			cause["grpc_status"] = *c.GrpcStatus
		}
		causes = append(causes, cause)
	}
	out["causes"] = causes
	return out
}

// builtFields is a builder's descriptor as its want spells it: without the language,
// which must be the client's own.
func builtFields(t *testing.T, d *errorclassv1.ExceptionDescriptor) any {
	t.Helper()
	if d == nil {
		return nil
	}
	if d.Language != Language {
		t.Errorf("field descriptor.language: got %q, want %q", d.Language, Language)
	}
	fields := vectorFields(d)
	delete(fields, "language")
	return fields
}

func text(v any) string {
	s, _ := v.(string)
	return s
}

func texts(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, item := range list {
		out = append(out, text(item))
	}
	return out
}

func int32Of(t testing.TB, v any) *int32 {
	t.Helper()
	if v == nil {
		return nil
	}
	n, err := v.(json.Number).Int64()
	if err != nil {
		t.Fatalf("not a whole number: %v", v)
	}
	return proto.Int32(int32(n))
}

// The runners, one per kind.

func errorBodyVector(t *testing.T, v vector) map[string]any {
	body := text(v.Input["body"])
	if pad, given := v.Input["pad"].(map[string]any); given {
		n, _ := pad["count"].(json.Number).Int64()
		body = strings.Replace(body, "@PAD@", strings.Repeat(text(pad["text"]), int(n)), 1)
	}
	header := http.Header{}
	headers, _ := v.Input["headers"].(map[string]any)
	for name, value := range headers {
		header[name] = []string{text(value)} // as given, in any case: readErrorBody must find it
	}
	return bodyFields(readErrorBody(int32Of(t, v.Input["status"]), header, body))
}

func streamErrorVector(t *testing.T, v vector) map[string]any {
	return bodyFields(readStreamError(text(v.Input["event"]), text(v.Input["data"])))
}

// bodyFields is what an error body or a stream event says, spelt as the vectors spell it.
func bodyFields(ev bodyEvidence) map[string]any {
	got := map[string]any{"code": ev.code, "message": ev.message, "attributes": ev.attributes}
	if ev.grpc != nil {
		got["grpc_status"] = *ev.grpc
	}
	return got
}

func finishReasonVector(t *testing.T, v vector) map[string]any {
	reason, provider, model := text(v.Input["reason"]), text(v.Input["provider"]), text(v.Input["model"])
	describe := DescribeFinishReason
	if blocked, _ := v.Input["prompt_blocked"].(bool); blocked {
		describe = DescribeBlockedPrompt
	}
	return map[string]any{"descriptor": builtFields(t, describe(reason, provider, model))}
}

func responseVector(t *testing.T, v vector) map[string]any {
	data, err := json.Marshal(v.Input["response"])
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"descriptor": builtFields(t, DescribeResponseJSON(data, text(v.Input["provider"])))}
}

func runtimeFactsVector(t *testing.T, v vector) map[string]any {
	facts, _ := v.Input["facts"].(map[string]any)
	attributes, err := RuntimeAttributes(facts)
	if err != nil {
		var refused *FactError
		if !errors.As(err, &refused) {
			t.Fatalf("RuntimeAttributes: %v is not a *FactError", err)
		}
		return map[string]any{"error": refused.Fact}
	}
	return map[string]any{"attributes": attributes}
}

func validateVector(t *testing.T, v vector) map[string]any {
	d, violations := Validate(descriptorFromVector(t, v.Input["descriptor"]))
	if len(violations) > 0 {
		list := make([]any, len(violations))
		for i, violation := range violations {
			list[i] = map[string]any{"field": violation.Field, "description": violation.Description}
		}
		return map[string]any{"violations": list}
	}
	return map[string]any{"descriptor": vectorFields(d)}
}

func fitVector(t *testing.T, v vector) map[string]any {
	in := descriptorFromVector(t, v.Input["descriptor"])
	before := proto.Clone(in)
	out := Fit(in)
	if !proto.Equal(in, before) {
		t.Errorf("Fit changed its input")
	}
	return map[string]any{"descriptor": vectorFields(out)}
}

func breakerVector(t *testing.T, v vector) map[string]any {
	state := newBreakerState(DefaultBreakerFailures, DefaultBreakerReset, MaxBreakerReset)
	states := []any{}
	waits := []any{}
	for _, event := range texts(v.Input["events"]) {
		switch event {
		case "ok":
			state.result(codes.OK)
		case "probe_ok", "probe_failed":
			waits = append(waits, state.probeWait().Milliseconds())
			state.probed(event == "probe_ok")
		case "call":
			states = append(states, map[bool]string{true: "allowed", false: "short_circuited"}[state.allow()])
			continue
		default:
			n, known := grpcCodes[event]
			if !known {
				t.Fatalf("event %q is neither ok, call, a probe nor a gRPC status", event)
			}
			state.result(codes.Code(n))
		}
		states = append(states, map[bool]string{true: "closed", false: "open"}[state.allow()])
	}
	return map[string]any{"states": states, "probe_waits_ms": waits}
}

// specBundles are the spec's bundles, each loaded once.
var specBundles = map[string]*Bundle{}

func specBundle(t *testing.T, name string) *Bundle {
	t.Helper()
	if b, loaded := specBundles[name]; loaded {
		return b
	}
	b, err := LoadBundle(filepath.Join(specDir(), "bundles", name+".json"))
	if err != nil {
		t.Fatalf("bundle %s: %v", name, err)
	}
	specBundles[name] = b
	return b
}

// bundleDescriptor is a bundle vector's descriptor, with @PAD@ in its messages expanded.
func bundleDescriptor(t testing.TB, v vector) *errorclassv1.ExceptionDescriptor {
	d := descriptorFromVector(t, v.Input["descriptor"])
	if pad, given := v.Input["pad"].(map[string]any); given {
		n, _ := pad["count"].(json.Number).Int64()
		expand := func(message string) string {
			return strings.Replace(message, "@PAD@", strings.Repeat(text(pad["text"]), int(n)), 1)
		}
		d.Message = expand(d.Message)
		for _, c := range d.Causes {
			c.Message = expand(c.Message)
		}
	}
	return d
}

func bundleVector(t *testing.T, v vector) map[string]any {
	b := specBundle(t, text(v.Input["bundle"]))
	var now time.Time
	if given, ok := v.Input["now"].(string); ok {
		var err error
		if now, err = time.Parse(time.RFC3339Nano, given); err != nil {
			t.Fatalf("%s: input.now: %v", v.Name, err)
		}
	}
	answer, err := b.ClassifyAt(bundleDescriptor(t, v), now)
	if err != nil {
		t.Errorf("%s: Classify: %v", v.Name, err)
		return nil
	}
	if answer.RulesetVersion != b.Version || answer.RulesetDigest != b.Digest || !answer.Local || answer.BundleDigest != b.BundleDigest {
		t.Errorf("%s: the answer names ruleset %s %s, local %v, bundle %s; the bundle is %s %s, %s", v.Name,
			answer.RulesetVersion, answer.RulesetDigest, answer.Local, answer.BundleDigest, b.Version, b.Digest, b.BundleDigest)
	}
	got := map[string]any{
		"class": answer.ClassName, "action": answer.GetAction().GetId(), "effect": effectNames[answer.Effect],
		"rule_id": answer.RuleId,
	}
	if answer.Retryable {
		got["retryable"] = true
	}
	if answer.UnknownReason != errorclassv1.UnknownReason_UNKNOWN_REASON_UNSPECIFIED {
		got["unknown_reason"] = unknownReasonNames[answer.UnknownReason]
	}
	if wait, ok := answer.RetryWait(); ok {
		got["retry_after"] = waitFields(wait)
	}
	return got
}

// waitFields is a wait as the vectors spell it.
func waitFields(wait RetryWait) map[string]any {
	return map[string]any{"seconds": float64(wait.Wait/time.Microsecond) / 1e6, "source": wait.Source, "capped": wait.Capped}
}

func retryAfterVector(t *testing.T, v vector) map[string]any {
	now, err := time.Parse(time.RFC3339Nano, text(v.Input["now"]))
	if err != nil {
		t.Fatalf("input.now: %v", err)
	}
	limit, err := v.Input["cap_seconds"].(json.Number).Float64()
	if err != nil {
		t.Fatalf("input.cap_seconds: %v", err)
	}
	attributes := map[string]string{}
	for key, value := range v.Input["attributes"].(map[string]any) {
		attributes[key] = text(value)
	}
	wait, ok := ReadRetryAfter(attributes, time.Duration(limit*float64(time.Second)), func() time.Time { return now })
	if !ok {
		return map[string]any{}
	}
	return map[string]any{"retry_after": waitFields(wait)}
}

func bundleVerifyVector(t *testing.T, v vector) map[string]any {
	data, err := os.ReadFile(filepath.Join(specDir(), "bundles", text(v.Input["bundle"])+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if offset, given := v.Input["flip_byte"].(json.Number); given {
		n, _ := offset.Int64()
		data[n] ^= 1
	}
	opts := []BundleOption{}
	if signatures, given := v.Input["signatures"].(string); given {
		opts = append(opts, WithSignatures([]byte(signatures)))
	} else {
		opts = append(opts, WithSignatures(nil))
	}
	for _, name := range texts(v.Input["trusted_keys"]) {
		pem, err := os.ReadFile(filepath.Join(specDir(), "keys", name+".pub"))
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, WithTrustedKeys(pem))
	}
	b, err := ParseBundle(data, opts...)
	if err != nil {
		var refused *BundleError
		if !errors.As(err, &refused) {
			t.Fatalf("ParseBundle: %v is not a *BundleError", err)
		}
		return map[string]any{"refused": refused.Code}
	}
	return map[string]any{"accepted": true, "key_ids": b.KeyIDs}
}
