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
	"unicode/utf8"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// The evaluator follows docs/bundles.md and the bundle itself (its descriptor
// normalisation, its precedence), never the service's code; the Python client's
// errorclass_client.bundle is the reference it is read against, and the spec's bundle
// vectors hold both to the service's answers.

const (
	bundleFormat        = "errorclass-bundle"
	bundleFormatVersion = 1
)

// bundlePrecedence is the precedence this evaluator implements; a bundle naming another
// is refused (BundleUnsupportedFormat).
var bundlePrecedence = []string{"decisive", "fallback", "type_depth", "condition_count", "priority", "layer", "order"}

// Bundle is a loaded (and, with WithTrustedKeys, verified) ruleset bundle, ready to
// classify in process. It is immutable and safe for concurrent use.
type Bundle struct {
	// Name, Version and Digest are the ruleset's, as GetRuleset reports them and every
	// answer carries them (RulesetVersion, RulesetDigest).
	Name, Version, Digest string
	// BundleDigest is sha256:<hex> of the bundle's bytes (RulesetInfo.bundle_digest).
	BundleDigest string
	// ClassifierVersion is the version of the classifier that built it.
	ClassifierVersion string
	// KeyIDs are the trusted keys whose signatures verified (none: loaded unverified).
	KeyIDs []string
	// Rules is how many rules it holds.
	Rules int

	norm     normaliser
	tiers    []tier
	noMatch  *bundleAnswer
	conflict *bundleAnswer
}

// tier is the rules of one pair of the first two precedence keys (decisive, fallback),
// indexed by the type names they list; rules without a type come after every typed one.
type tier struct {
	byType  map[string]*bucket
	untyped *bucket
}

// bucket is rules that share a type name (or have none), looked up by a plain field one
// of their conditions names, so that an evaluation tests a few rules, not all of them.
type bucket struct {
	always  []*bundleRule
	byField []fieldIndex
}

type fieldIndex struct {
	field  bundleField
	values map[string][]*bundleRule
}

type bundleRule struct {
	id         string
	order      int
	conditions []condition
	rank       [3]int // -condition_count, -priority, layer: the keys after type depth
	answer     *bundleAnswer
}

// bundleAnswer is what a rule (or an Unknown) answers, the ClassifyResponse's fields.
type bundleAnswer struct {
	class     int32
	className string
	action    struct{ id, summary, runbookURL string }
	effect    errorclassv1.RunEffect
	retryable bool
	ruleID    string
	unknown   errorclassv1.UnknownReason
}

type bundleField uint8

const (
	fieldNone bundleField = iota
	fieldHTTPStatus
	fieldGRPCStatus
	fieldCode
	fieldOrigin
	fieldProvider
	fieldLanguage
	fieldMessage
)

var fieldNames = map[string]bundleField{
	"http_status": fieldHTTPStatus, "grpc_status": fieldGRPCStatus, "code": fieldCode, "origin": fieldOrigin,
	"provider": fieldProvider, "language": fieldLanguage, "message": fieldMessage,
}

// splitFields are the plain fields a bucket looks its rules up by, in the order chosen.
var splitFields = []bundleField{fieldCode, fieldGRPCStatus, fieldProvider, fieldOrigin, fieldLanguage}

type conditionKind uint8

const (
	condType conditionKind = iota + 1
	condFieldIn
	condPresent
	condMessage
	condAttribute
	condCause
)

// condition is one of a rule's conditions, compiled: a switch, not a closure, so that an
// evaluation's descriptor stays on the stack.
type condition struct {
	kind    conditionKind
	field   bundleField
	texts   textSet
	numbers []int32
	ranges  [][2]int64
	present bool
	pattern *regexp.Regexp
	filter  *prefilter
	name    string
	inner   []condition
}

// textSet is a set of texts: a list while short (faster than a map), a map beyond.
type textSet struct {
	list []string
	set  map[string]struct{}
}

func newTextSet(texts []string) textSet {
	if len(texts) <= 8 {
		return textSet{list: texts}
	}
	set := make(map[string]struct{}, len(texts))
	for _, t := range texts {
		set[t] = struct{}{}
	}
	return textSet{set: set}
}

func (s *textSet) has(text string) bool {
	if s.set != nil {
		_, ok := s.set[text]
		return ok
	}
	return slices.Contains(s.list, text)
}

// subject is a normalised descriptor, or one of its causes (which have no origin,
// labels or attributes).
type subject struct {
	chain      []string // the type, then its supertypes
	http, grpc int32
	hasHTTP    bool
	hasGRPC    bool
	code       string
	message    string
	folded     string // the message folded (foldASCII) when a prefilter needed it
	origin     string // by name; "" when unspecified
	language   string
	provider   string
	attributes map[string]string
	causes     []subject
}

func (s *subject) text(f bundleField) string {
	switch f {
	case fieldCode:
		return s.code
	case fieldOrigin:
		return s.origin
	case fieldProvider:
		return s.provider
	case fieldLanguage:
		return s.language
	case fieldMessage:
		return s.message
	}
	return ""
}

func (s *subject) number(f bundleField) (int32, bool) {
	switch f {
	case fieldHTTPStatus:
		return s.http, s.hasHTTP
	case fieldGRPCStatus:
		return s.grpc, s.hasGRPC
	}
	return 0, false
}

func (s *subject) isSet(f bundleField) bool {
	if f == fieldHTTPStatus || f == fieldGRPCStatus {
		_, set := s.number(f)
		return set
	}
	return s.text(f) != ""
}

// key is the subject's value of a split field as a bucket's index spells it.
func (s *subject) key(f bundleField) (string, bool) {
	if f == fieldGRPCStatus {
		if !s.hasGRPC {
			return "", false
		}
		return strconv.Itoa(int(s.grpc)), true
	}
	return s.text(f), true
}

func (c *condition) holds(s *subject) bool {
	switch c.kind {
	case condType:
		for _, name := range s.chain {
			if c.texts.has(name) {
				return true
			}
		}
		return false
	case condFieldIn:
		if c.field == fieldHTTPStatus || c.field == fieldGRPCStatus {
			n, set := s.number(c.field)
			if !set {
				return false
			}
			for _, r := range c.ranges {
				if int64(n) >= r[0] && int64(n) <= r[1] {
					return true
				}
			}
			return slices.Contains(c.numbers, n)
		}
		return c.texts.has(s.text(c.field))
	case condPresent:
		return s.isSet(c.field) == c.present
	case condMessage:
		if c.filter != nil {
			if !c.filter.mayMatch(s.message, &s.folded) {
				return false
			}
			if c.filter.exact {
				return true
			}
		}
		return c.pattern.MatchString(s.message)
	case condAttribute:
		value, ok := s.attributes[c.name]
		return ok && c.texts.has(value)
	case condCause:
		for i := range s.causes {
			if allHold(c.inner, &s.causes[i]) {
				return true
			}
		}
	}
	return false
}

func allHold(conditions []condition, s *subject) bool {
	for i := range conditions {
		if !conditions[i].holds(s) {
			return false
		}
	}
	return true
}

// found appends the bucket's rules whose every condition holds for d.
func (b *bucket) found(d *subject, out []*bundleRule) []*bundleRule {
	for _, r := range b.always {
		if allHold(r.conditions, d) {
			out = append(out, r)
		}
	}
	for _, index := range b.byField {
		value, ok := d.key(index.field)
		if !ok {
			continue
		}
		for _, r := range index.values[value] {
			if allHold(r.conditions, d) {
				out = append(out, r)
			}
		}
	}
	return out
}

// Classify answers for d as the service would, from the bundle alone: the matching rule
// of highest precedence (or Unknown: no_match, or conflict when equally placed rules
// disagree), marked Local with the BundleDigest. A descriptor the service would refuse
// (a limit passed, an empty type, a status out of range) is a *DescriptorError naming
// each field, as the service names it; the builders' descriptors (Describe, Fit) never
// are.
func (b *Bundle) Classify(d *errorclassv1.ExceptionDescriptor) (*Answer, error) {
	var s subject
	if problems := b.norm.descriptor(d, &s); len(problems) > 0 {
		return nil, &DescriptorError{Violations: problems}
	}
	var buffer [8]*bundleRule
	found := buffer[:0]
	for i := range b.tiers {
		t := &b.tiers[i]
		for _, name := range s.chain {
			if bk := t.byType[name]; bk != nil {
				if found = bk.found(&s, found[:0]); len(found) > 0 {
					return b.answer(b.decide(found)), nil
				}
			}
		}
		if t.untyped != nil {
			if found = t.untyped.found(&s, found[:0]); len(found) > 0 {
				return b.answer(b.decide(found)), nil
			}
		}
	}
	return b.answer(b.noMatch), nil
}

// decide applies the keys after type depth (condition count, priority, layer) and then
// the rules' order: the first of the best answers, unless an equally placed rule
// disagrees on class or effect (Unknown, conflict).
func (b *Bundle) decide(found []*bundleRule) *bundleAnswer {
	var first *bundleRule
	for _, r := range found {
		if first == nil || less(r.rank, first.rank) || (r.rank == first.rank && r.order < first.order) {
			first = r
		}
	}
	for _, r := range found {
		if r.rank == first.rank && (r.answer.class != first.answer.class || r.answer.effect != first.answer.effect) {
			return b.conflict
		}
	}
	return first.answer
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// localAnswer holds a local answer and its messages in one allocation.
type localAnswer struct {
	answer   Answer
	response errorclassv1.ClassifyResponse
	action   errorclassv1.Action
}

func (b *Bundle) answer(a *bundleAnswer) *Answer {
	l := &localAnswer{}
	l.action.Id, l.action.Summary, l.action.RunbookUrl = a.action.id, a.action.summary, a.action.runbookURL
	r := &l.response
	r.ErrorClass, r.ClassName, r.Action = errorclassv1.RunErrorClass(a.class), a.className, &l.action
	r.Effect, r.Retryable, r.RuleId, r.UnknownReason = a.effect, a.retryable, a.ruleID, a.unknown
	r.RulesetVersion, r.RulesetDigest = b.Version, b.Digest
	l.answer = Answer{ClassifyResponse: r, Local: true, BundleDigest: b.BundleDigest}
	return &l.answer
}

// normaliser is what a descriptor goes through before matching, read from the bundle's
// `descriptor` section (docs/bundles.md, "Before matching").
type normaliser struct {
	asciiSpace    [utf8.RuneSelf]bool // the bundle's whitespace
	otherSpace    []rune
	quickStrip    bool // no printable ASCII in whitespace: a text with such ends is stripped
	lowerLanguage bool
	lowerProvider bool
	maxMessage    int
	maxTypeName   int
	maxSupertypes int
	maxCauses     int
	maxCode       int
	maxLabel      int
	maxAttributes int
	maxKey        int
	maxValue      int
}

// strip removes the bundle's whitespace from both ends of text (whose bytes that are not
// UTF-8 stand for U+FFFD, as the service reads them).
func (n *normaliser) strip(text string) string {
	if text == "" {
		return text
	}
	if n.quickStrip {
		first, last := text[0], text[len(text)-1]
		if first > ' ' && first < 0x7f && last > ' ' && last < 0x7f {
			return validText(text)
		}
	}
	start, end := 0, len(text)
	for start < end {
		r, size := rune(text[start]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[start:end])
		}
		if !n.isSpace(r) {
			break
		}
		start += size
	}
	for end > start {
		r, size := rune(text[end-1]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeLastRuneInString(text[start:end])
		}
		if !n.isSpace(r) {
			break
		}
		end -= size
	}
	return validText(text[start:end])
}

func (n *normaliser) isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return n.asciiSpace[r]
	}
	return slices.Contains(n.otherSpace, r)
}

// message is the text matched: each byte that is not UTF-8 stands for U+FFFD (as Go's
// regexp reads it, and as the service replaces a lone surrogate), cut to maxMessage
// characters.
func (n *normaliser) message(text string) string {
	if len(text) <= n.maxMessage {
		return text
	}
	return cut(text, n.maxMessage)
}

// problems are the fields of a descriptor the service would refuse, named as it names
// them (Validate's paths); a path is spelt only when there is a problem.
type problems struct {
	list []FieldViolation
}

// add names the field of the descriptor (cause < 0) or of its cause, and an item of a
// list field (item >= 0).
func (p *problems) add(cause int, field string, item int, format string, args ...any) {
	path := "descriptor."
	if cause >= 0 {
		path += fmt.Sprintf("causes[%d].", cause)
	}
	path += field
	if item >= 0 {
		path += fmt.Sprintf("[%d]", item)
	}
	p.list = append(p.list, FieldViolation{Field: path, Description: fmt.Sprintf(format, args...)})
}

func (n *normaliser) descriptor(d *errorclassv1.ExceptionDescriptor, s *subject) []FieldViolation {
	var p problems
	if d == nil {
		d = &errorclassv1.ExceptionDescriptor{}
	}
	n.cause(d.GetType(), d.GetSupertypes(), d.HttpStatus, d.GrpcStatus, d.GetCode(), d.GetMessage(), -1, s, &p)
	origin := d.GetOrigin()
	switch {
	case !originKnown(origin):
		p.add(-1, "origin", -1, "%d is not a known origin (0-%d)", origin, len(originNames)-1)
	case origin != errorclassv1.Origin_ORIGIN_UNSPECIFIED:
		s.origin = originNames[origin]
	}
	s.language = n.label(d.GetLanguage(), "language", n.lowerLanguage, &p)
	s.provider = n.label(d.GetProvider(), "provider", n.lowerProvider, &p)
	s.attributes = n.attributes(d.GetAttributes(), &p)
	causes := d.GetCauses()
	if len(causes) > n.maxCauses {
		p.add(-1, "causes", -1, "%d causes exceed the limit of %d", len(causes), n.maxCauses)
		causes = nil
	}
	if len(causes) > 0 {
		s.causes = make([]subject, len(causes))
		for i, c := range causes {
			n.cause(c.GetType(), c.GetSupertypes(), c.HttpStatus, c.GrpcStatus, c.GetCode(), c.GetMessage(), i, &s.causes[i], &p)
		}
	}
	return p.list
}

// cause normalises the descriptor's own fields (cause < 0) or one of its causes'.
func (n *normaliser) cause(kind string, supertypes []string, http, grpc *int32, code, message string, cause int, s *subject, p *problems) {
	if len(supertypes) > n.maxSupertypes {
		p.add(cause, "supertypes", -1, "%d entries exceed the limit of %d", len(supertypes), n.maxSupertypes)
		supertypes = nil
	}
	s.chain = make([]string, 1+len(supertypes))
	s.chain[0] = n.name(kind, cause, "type", -1, p)
	for i, name := range supertypes {
		s.chain[i+1] = n.name(name, cause, "supertypes", i, p)
	}
	if http != nil {
		if *http < 100 || *http > 599 {
			p.add(cause, "http_status", -1, "%d is not an HTTP status (100-599)", *http)
		}
		s.http, s.hasHTTP = *http, true
	}
	if grpc != nil {
		if !grpcStatusOK(grpc) {
			p.add(cause, "grpc_status", -1, "%d is not a gRPC status code (0-%d)", *grpc, maxGRPCCode)
		}
		s.grpc, s.hasGRPC = *grpc, true
	}
	s.code = n.strip(code)
	if len(s.code) > n.maxCode && chars(s.code) > n.maxCode {
		p.add(cause, "code", -1, "%d characters exceed the limit of %d", chars(s.code), n.maxCode)
	}
	s.message = n.message(message)
}

func (n *normaliser) name(text string, cause int, field string, item int, p *problems) string {
	text = n.strip(text)
	switch {
	case text == "":
		p.add(cause, field, item, "must not be empty")
	case len(text) > n.maxTypeName && chars(text) > n.maxTypeName:
		p.add(cause, field, item, "%d characters exceed the limit of %d", chars(text), n.maxTypeName)
	}
	return text
}

// label is a language or provider: stripped, its length checked, then lower-cased
// (Python's str.lower, as the service does).
func (n *normaliser) label(text, field string, lowered bool, p *problems) string {
	text = n.strip(text)
	if len(text) > n.maxLabel && chars(text) > n.maxLabel {
		p.add(-1, field, -1, "%d characters exceed the limit of %d", chars(text), n.maxLabel)
	}
	if lowered {
		return lower(text)
	}
	return text
}

func (n *normaliser) attributes(attributes map[string]string, p *problems) map[string]string {
	if len(attributes) > n.maxAttributes {
		p.add(-1, "attributes", -1, "%d attributes exceed the limit of %d", len(attributes), n.maxAttributes)
	}
	valid := true
	for key, value := range attributes {
		switch {
		case key == "":
			p.add(-1, "attributes", -1, "an attribute key must not be empty")
		case len(key) > n.maxKey && chars(key) > n.maxKey:
			p.add(-1, "attributes["+pythonRepr(cut(key, 40))+"]", -1, "key exceeds the limit of %d characters", n.maxKey)
		case len(value) > n.maxValue && chars(value) > n.maxValue:
			p.add(-1, "attributes["+pythonRepr(key)+"]", -1, "value exceeds the limit of %d characters", n.maxValue)
		}
		valid = valid && utf8.ValidString(key) && utf8.ValidString(value)
	}
	if valid {
		return attributes
	}
	out := make(map[string]string, len(attributes))
	for key, value := range attributes {
		out[validText(key)] = validText(value)
	}
	return out
}

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
