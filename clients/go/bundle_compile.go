package errorclass

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

const (
	bundleFormat        = "errorclass-bundle"
	bundleFormatVersion = 1
)

// bundlePrecedence is the precedence this evaluator implements; a bundle naming another
// is refused (BundleUnsupportedFormat).
var bundlePrecedence = []string{"decisive", "fallback", "type_depth", "condition_count", "priority", "layer", "order"}

// The bundle document (classifier/schemas/bundle.schema.json).

type bundleHeader struct {
	Format        any `json:"format"`
	FormatVersion any `json:"format_version"`
	Precedence    any `json:"precedence"`
}

type bundleDocument struct {
	ClassifierVersion string `json:"classifier_version"`
	Ruleset           struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		Digest  string `json:"digest"`
	} `json:"ruleset"`
	Descriptor struct {
		Whitespace      string         `json:"whitespace"`
		Stripped        []string       `json:"stripped"`
		LowerCased      []string       `json:"lower_cased"`
		MessageMaxChars int            `json:"message_max_chars"`
		Limits          map[string]int `json:"limits"`
	} `json:"descriptor"`
	Unknown map[string]answerDocument `json:"unknown"`
	Rules   []ruleDocument            `json:"rules"`
}

type answerDocument struct {
	Class     int32  `json:"class"`
	ClassName string `json:"class_name"`
	Action    struct {
		ID         string `json:"id"`
		Summary    string `json:"summary"`
		RunbookURL string `json:"runbook_url"`
	} `json:"action"`
	Effect    string `json:"effect"`
	Retryable bool   `json:"retryable"`
	// RetryAfterCap is the longest wait the rule advises (retryable answers only).
	RetryAfterCap *float64 `json:"retry_after_cap_seconds"`
}

type ruleDocument struct {
	ID             string              `json:"id"`
	Order          int                 `json:"order"`
	Layer          int                 `json:"layer"`
	Fallback       bool                `json:"fallback"`
	Decisive       bool                `json:"decisive"`
	Priority       int                 `json:"priority"`
	ConditionCount int                 `json:"condition_count"`
	Type           *[]string           `json:"type"`
	Conditions     []conditionDocument `json:"conditions"`
	Answer         answerDocument      `json:"answer"`
}

type conditionDocument struct {
	Kind       string              `json:"kind"`
	Field      string              `json:"field"`
	Values     []any               `json:"values"`
	Ranges     [][2]float64        `json:"ranges"`
	Present    *bool               `json:"present"`
	Pattern    *string             `json:"pattern"`
	Name       string              `json:"name"`
	Names      []string            `json:"names"`
	Conditions []conditionDocument `json:"conditions"`
}

// compileBundle reads a bundle document and indexes its rules: every pattern compiled
// once, every rule placed in its tier's bucket of each type name it lists.
func compileBundle(data []byte) (*Bundle, error) {
	var header bundleHeader
	if err := json.Unmarshal(data, &header); err != nil {
		return nil, &BundleError{Code: BundleInvalid, Message: "not JSON (" + err.Error() + ")", Err: err}
	}
	if header.Format != bundleFormat {
		return nil, bundleError(BundleInvalid, "not a ruleset bundle (format %v)", header.Format)
	}
	precedence, _ := json.Marshal(header.Precedence)
	want, _ := json.Marshal(bundlePrecedence)
	if header.FormatVersion != float64(bundleFormatVersion) || !bytes.Equal(precedence, want) {
		return nil, bundleError(BundleUnsupportedFormat, "bundle format %v with precedence %s: this evaluator reads format %d",
			header.FormatVersion, precedence, bundleFormatVersion)
	}
	var doc bundleDocument
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, &BundleError{Code: BundleInvalid, Message: err.Error(), Err: err}
	}
	norm, err := newNormaliser(doc)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	b := &Bundle{
		Name: doc.Ruleset.Name, Version: doc.Ruleset.Version, Digest: doc.Ruleset.Digest,
		BundleDigest: "sha256:" + hex.EncodeToString(sum[:]), ClassifierVersion: doc.ClassifierVersion,
		Rules: len(doc.Rules), norm: norm,
	}
	var refused *BundleError
	if b.noMatch, refused = newAnswer(doc.Unknown["no_match"], "", errorclassv1.UnknownReason_UNKNOWN_REASON_NO_MATCH); refused != nil {
		return nil, refused
	}
	if b.conflict, refused = newAnswer(doc.Unknown["conflict"], "", errorclassv1.UnknownReason_UNKNOWN_REASON_CONFLICT); refused != nil {
		return nil, refused
	}
	c := compiler{patterns: map[string]*regexp.Regexp{}, filters: map[string]*prefilter{}}
	byTier := [4][]*bundleRule{}
	names := [4][]*[]string{}
	for i := range doc.Rules {
		r := &doc.Rules[i]
		rule, refused := c.rule(r)
		if refused != nil {
			return nil, refused
		}
		t := 2
		if r.Decisive {
			t = 0
		}
		if r.Fallback {
			t++
		}
		byTier[t] = append(byTier[t], rule)
		names[t] = append(names[t], r.Type)
	}
	for t := range byTier {
		if len(byTier[t]) == 0 {
			continue
		}
		byType := map[string][]*bundleRule{}
		var untyped []*bundleRule
		for i, rule := range byTier[t] {
			if names[t][i] == nil {
				untyped = append(untyped, rule)
				continue
			}
			for _, name := range *names[t][i] {
				if !slices.Contains(byType[name], rule) {
					byType[name] = append(byType[name], rule)
				}
			}
		}
		next := tier{byType: make(map[string]*bucket, len(byType))}
		for name, rules := range byType {
			next.byType[name] = newBucket(rules, c.splits)
		}
		if len(untyped) > 0 {
			next.untyped = newBucket(untyped, c.splits)
		}
		b.tiers = append(b.tiers, next)
	}
	return b, nil
}

func newNormaliser(doc bundleDocument) (normaliser, error) {
	spec := doc.Descriptor
	stripped := slices.Sorted(slices.Values(spec.Stripped))
	if !slices.Equal(stripped, []string{"code", "language", "provider", "supertypes", "type"}) {
		return normaliser{}, bundleError(BundleUnsupportedFormat, "the bundle strips %v; this evaluator strips type, supertypes, code, language and provider", spec.Stripped)
	}
	n := normaliser{maxMessage: spec.MessageMaxChars, quickStrip: true}
	for _, r := range spec.Whitespace {
		if r < utf8.RuneSelf {
			n.asciiSpace[r] = true
			n.quickStrip = n.quickStrip && (r <= ' ' || r >= 0x7f)
		} else {
			n.otherSpace = append(n.otherSpace, r)
		}
	}
	for _, name := range spec.LowerCased {
		switch name {
		case "language":
			n.lowerLanguage = true
		case "provider":
			n.lowerProvider = true
		default:
			return normaliser{}, bundleError(BundleUnsupportedFormat, "the bundle lower-cases %q; this evaluator lower-cases language and provider", name)
		}
	}
	for name, limit := range map[string]*int{
		"MAX_TYPE_NAME_CHARS": &n.maxTypeName, "MAX_SUPERTYPES": &n.maxSupertypes, "MAX_CAUSES": &n.maxCauses,
		"MAX_CODE_CHARS": &n.maxCode, "MAX_LABEL_CHARS": &n.maxLabel, "MAX_ATTRIBUTES": &n.maxAttributes,
		"MAX_ATTRIBUTE_KEY_CHARS": &n.maxKey, "MAX_ATTRIBUTE_VALUE_CHARS": &n.maxValue,
	} {
		value, given := spec.Limits[name]
		if !given || value <= 0 {
			return normaliser{}, bundleError(BundleInvalid, "descriptor.limits.%s is missing", name)
		}
		*limit = value
	}
	if n.maxMessage <= 0 {
		return normaliser{}, bundleError(BundleInvalid, "descriptor.message_max_chars is missing")
	}
	return n, nil
}

func newAnswer(a answerDocument, ruleID string, unknown errorclassv1.UnknownReason) (*bundleAnswer, *BundleError) {
	effect := slices.Index(effectNames[:], a.Effect)
	if effect < 0 {
		return nil, bundleError(BundleInvalid, "effect %q is not one of %v", a.Effect, effectNames)
	}
	out := &bundleAnswer{
		class: a.Class, className: a.ClassName, effect: errorclassv1.RunEffect(effect),
		retryable: a.Retryable, ruleID: ruleID, unknown: unknown,
	}
	if cap := a.RetryAfterCap; cap != nil && a.Retryable {
		if *cap < 0 || math.IsNaN(*cap) || *cap > math.MaxInt64/float64(time.Second) {
			return nil, bundleError(BundleInvalid, "retry_after_cap_seconds %v is not a wait", *cap)
		}
		out.retryCap, out.advises = time.Duration(*cap*float64(time.Second)), true
	}
	out.action.id, out.action.summary, out.action.runbookURL = a.Action.ID, a.Action.Summary, a.Action.RunbookURL
	return out, nil
}

// compiler compiles a bundle's conditions, each distinct pattern once.
type compiler struct {
	patterns map[string]*regexp.Regexp
	filters  map[string]*prefilter
	splits   map[*bundleRule]split
}

// split is a plain field and its values, one of a rule's conditions: a descriptor whose
// field is elsewhere cannot match, so a bucket looks the rule up by it.
type split struct {
	field  bundleField
	values []string
}

func (c *compiler) rule(r *ruleDocument) (*bundleRule, *BundleError) {
	answer, err := newAnswer(r.Answer, r.ID, errorclassv1.UnknownReason_UNKNOWN_REASON_UNSPECIFIED)
	if err != nil {
		err.Message = "rule " + r.ID + ": " + err.Message
		return nil, err
	}
	rule := &bundleRule{id: r.ID, order: r.Order, rank: [3]int{-r.ConditionCount, -r.Priority, r.Layer}, answer: answer}
	for i := range r.Conditions {
		compiled, err := c.condition(&r.Conditions[i], false)
		if err != nil {
			err.Message = "rule " + r.ID + ": " + err.Message
			return nil, err
		}
		rule.conditions = append(rule.conditions, compiled)
	}
	cheapFirst(rule.conditions)
	for _, f := range splitFields {
		for i := range rule.conditions {
			cond := &rule.conditions[i]
			if cond.kind != condFieldIn || cond.field != f || (f == fieldGRPCStatus && len(cond.ranges) > 0) {
				continue
			}
			if c.splits == nil {
				c.splits = map[*bundleRule]split{}
			}
			if f == fieldGRPCStatus {
				var keys []string
				for _, n := range cond.numbers {
					keys = append(keys, strconv.Itoa(int(n)))
				}
				c.splits[rule] = split{field: f, values: keys}
			} else {
				c.splits[rule] = split{field: f, values: r.Conditions[i].textValues()}
			}
			return rule, nil
		}
	}
	return rule, nil
}

func (d *conditionDocument) textValues() []string {
	var out []string
	for _, v := range d.Values {
		if text, ok := v.(string); ok {
			out = append(out, text)
		}
	}
	return out
}

func (c *compiler) condition(d *conditionDocument, inCause bool) (condition, *BundleError) {
	unsupported := func(format string, args ...any) (condition, *BundleError) {
		return condition{}, bundleError(BundleUnsupportedFormat, format, args...)
	}
	switch d.Kind {
	case "type":
		if !inCause {
			return unsupported("a condition of kind type outside a cause")
		}
		return condition{kind: condType, texts: newTextSet(d.Names)}, nil
	case "field_in":
		f, known := fieldNames[d.Field]
		if !known || f == fieldMessage {
			return unsupported("a field_in condition on %q", d.Field)
		}
		out := condition{kind: condFieldIn, field: f}
		if f == fieldHTTPStatus || f == fieldGRPCStatus {
			for _, r := range d.Ranges {
				out.ranges = append(out.ranges, [2]int64{int64(r[0]), int64(r[1])})
			}
			for _, v := range d.Values {
				if n, ok := v.(float64); ok && n == math.Trunc(n) && math.Abs(n) <= math.MaxInt32 {
					out.numbers = append(out.numbers, int32(n))
				}
			}
			return out, nil
		}
		out.texts = newTextSet(d.textValues())
		return out, nil
	case "present":
		f, known := fieldNames[d.Field]
		if !known || d.Present == nil {
			return unsupported("a present condition on %q", d.Field)
		}
		return condition{kind: condPresent, field: f, present: *d.Present}, nil
	case "message":
		if d.Pattern == nil {
			return condition{}, bundleError(BundleInvalid, "a message condition without a pattern")
		}
		pattern, compiled := c.patterns[*d.Pattern]
		if !compiled {
			var err error
			if pattern, err = regexp.Compile(*d.Pattern); err != nil {
				return condition{}, &BundleError{Code: BundleInvalid, Message: fmt.Sprintf("pattern %q: %v", *d.Pattern, err), Err: err}
			}
			c.patterns[*d.Pattern] = pattern
			c.filters[*d.Pattern] = newPrefilter(*d.Pattern)
		}
		return condition{kind: condMessage, field: fieldMessage, pattern: pattern, filter: c.filters[*d.Pattern]}, nil
	case "attribute":
		if inCause {
			return unsupported("an attribute condition inside a cause")
		}
		return condition{kind: condAttribute, name: d.Name, texts: newTextSet(d.textValues())}, nil
	case "cause":
		if inCause {
			return unsupported("a cause condition inside a cause")
		}
		out := condition{kind: condCause}
		for i := range d.Conditions {
			inner, err := c.condition(&d.Conditions[i], true)
			if err != nil {
				return condition{}, err
			}
			out.inner = append(out.inner, inner)
		}
		cheapFirst(out.inner)
		return out, nil
	}
	return unsupported("a condition of kind %q", d.Kind)
}

// cheapFirst orders a rule's conditions (all of which must hold) so that a comparison
// decides before a cause is searched or a pattern is run.
func cheapFirst(conditions []condition) {
	cost := func(c condition) int {
		switch c.kind {
		case condCause:
			return 1
		case condMessage:
			return 2
		}
		return 0
	}
	slices.SortStableFunc(conditions, func(a, b condition) int { return cost(a) - cost(b) })
}

func newBucket(rules []*bundleRule, splits map[*bundleRule]split) *bucket {
	b := &bucket{}
	indexes := map[bundleField]map[string][]*bundleRule{}
	for _, r := range rules {
		s, ok := splits[r]
		if !ok {
			b.always = append(b.always, r)
			continue
		}
		if indexes[s.field] == nil {
			indexes[s.field] = map[string][]*bundleRule{}
		}
		for _, v := range slices.Compact(slices.Sorted(slices.Values(s.values))) {
			indexes[s.field][v] = append(indexes[s.field][v], r)
		}
	}
	for _, f := range splitFields {
		if values, ok := indexes[f]; ok {
			b.byField = append(b.byField, fieldIndex{field: f, values: values})
		}
	}
	return b
}
