package errorclass

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/durationpb"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// The evaluator follows docs/bundles.md and the bundle itself (its descriptor
// normalisation, its precedence), never the service's code; the Python client's
// errorclass_client.bundle is the reference it is read against, and the spec's bundle
// vectors hold both to the service's answers.

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
	advises   bool          // retryable, with a cap: reads the descriptor's retry evidence
	retryCap  time.Duration // the longest wait it advises
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
			return c.filter.matches(s.message, &s.folded, c.pattern)
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
// are. A retryable answer whose descriptor carries the provider's retry evidence says how
// long to wait (RetryAfter), a date read against the provider's `date` header or else
// this process's clock (ClassifyAt takes another).
func (b *Bundle) Classify(d *errorclassv1.ExceptionDescriptor) (*Answer, error) {
	return b.ClassifyAt(d, time.Time{})
}

// ClassifyAt is Classify with now as the runtime's clock for the wait a date asks for
// (the zero time: the process's clock, read only when a date needs it).
func (b *Bundle) ClassifyAt(d *errorclassv1.ExceptionDescriptor, now time.Time) (*Answer, error) {
	var s subject
	answer, err := b.classify(d, &s)
	if err != nil || !answer.advises {
		return b.answer(answer, nil), err
	}
	clock := time.Now
	if !now.IsZero() {
		clock = func() time.Time { return now }
	}
	wait, ok := ReadRetryAfter(s.attributes, answer.retryCap, clock)
	if !ok {
		return b.answer(answer, nil), nil
	}
	return b.answer(answer, &wait), nil
}

func (b *Bundle) classify(d *errorclassv1.ExceptionDescriptor, s *subject) (*bundleAnswer, error) {
	if problems := b.norm.descriptor(d, s); len(problems) > 0 {
		return nil, &DescriptorError{Violations: problems}
	}
	var buffer [8]*bundleRule
	found := buffer[:0]
	for i := range b.tiers {
		t := &b.tiers[i]
		for _, name := range s.chain {
			if bk := t.byType[name]; bk != nil {
				if found = bk.found(s, found[:0]); len(found) > 0 {
					return b.decide(found), nil
				}
			}
		}
		if t.untyped != nil {
			if found = t.untyped.found(s, found[:0]); len(found) > 0 {
				return b.decide(found), nil
			}
		}
	}
	return b.noMatch, nil
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
	wait     durationpb.Duration
}

func (b *Bundle) answer(a *bundleAnswer, wait *RetryWait) *Answer {
	if a == nil {
		return nil
	}
	l := &localAnswer{}
	l.action.Id, l.action.Summary, l.action.RunbookUrl = a.action.id, a.action.summary, a.action.runbookURL
	r := &l.response
	r.ErrorClass, r.ClassName, r.Action = errorclassv1.RunErrorClass(a.class), a.className, &l.action
	r.Effect, r.Retryable, r.RuleId, r.UnknownReason = a.effect, a.retryable, a.ruleID, a.unknown
	r.RulesetVersion, r.RulesetDigest = b.Version, b.Digest
	if wait != nil {
		l.wait.Seconds = int64(wait.Wait / time.Second)
		l.wait.Nanos = int32(wait.Wait % time.Second)
		r.RetryAfter, r.RetryAfterSource = &l.wait, wait.LabelledSource()
	}
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
