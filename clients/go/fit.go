package errorclass

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// The text rules every client shares (clients/spec/README.md, "Counting"): a character is
// a Unicode code point, "stripped" removes the facts' whitespace (Python's str.isspace,
// as the service strips) from both ends, and text that is not valid UTF-8 has each bad
// byte replaced by U+FFFD, as the service replaces a lone surrogate: protobuf refuses to
// marshal a string field that is not UTF-8, so an error message holding a Latin-1 file
// name would otherwise fail the call on this side.

// strip removes the facts' whitespace from both ends of text.
func strip(text string) string { return strings.Trim(text, whitespace) }

// validText is text with every byte that is not UTF-8 replaced by U+FFFD.
func validText(text string) string {
	if utf8.ValidString(text) {
		return text
	}
	var b strings.Builder
	for _, r := range text { // an invalid byte ranges as utf8.RuneError, one byte at a time
		b.WriteRune(r)
	}
	return b.String()
}

// chars is the length of text in characters (code points; an invalid byte is one).
func chars(text string) int { return utf8.RuneCountInString(text) }

// cut keeps the first limit characters of text: a cut never splits a character.
func cut(text string, limit int) string {
	n := 0
	for i := range text {
		if n == limit {
			return text[:i]
		}
		n++
	}
	return text
}

// label is a language or provider as the service keeps it: stripped and lower-cased.
func label(text string) string { return lower(strip(validText(text))) }

// lower is text lower-cased as the service lower-cases a label (Python's str.lower:
// Unicode's full mapping), not as strings.ToLower does, which maps U+0130 to "i" where
// the full mapping gives "i" and U+0307, and a final capital sigma to σ where it gives ς.
// Those two are the only differences: U+0130 is the one unconditional multi-character
// lower-case mapping, Final_Sigma the one condition a language-neutral mapping applies.
func lower(text string) string {
	special := false
	for i := 0; i < len(text); i++ {
		if c := text[i]; c >= utf8.RuneSelf {
			special = true
			break
		}
	}
	if !special || !strings.ContainsAny(text, "\u0130\u03a3") {
		return strings.ToLower(text)
	}
	runes := []rune(text)
	var b strings.Builder
	for i, r := range runes {
		switch r {
		case '\u0130':
			b.WriteString("i\u0307")
		case '\u03a3':
			if finalSigma(runes, i) {
				b.WriteRune('\u03c2')
			} else {
				b.WriteRune('\u03c3')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma is Unicode's Final_Sigma condition on the sigma at runes[i], as CPython
// tests it: a cased letter before it (case-ignorable characters between), and none after
// it (case-ignorable characters between).
func finalSigma(runes []rune, i int) bool {
	j := i - 1
	for j >= 0 && caseIgnorable(runes[j]) {
		j--
	}
	if j < 0 || !cased(runes[j]) {
		return false
	}
	j = i + 1
	for j < len(runes) && caseIgnorable(runes[j]) {
		j++
	}
	return j == len(runes) || !cased(runes[j])
}

// cased is Unicode's Cased property: Lowercase, Uppercase or a title-case letter.
func cased(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable is Unicode's Case_Ignorable property: marks, format characters,
// modifiers, and the word-break MidLetter, MidNumLet and Single_Quote characters.
func caseIgnorable(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk) ||
		strings.ContainsRune(wordBreakMid, r)
}

// wordBreakMid are the characters of Word_Break MidLetter, MidNumLet and Single_Quote.
const wordBreakMid = "'.:\u00b7\u0387\u055f\u05f4\u2018\u2019\u2024\u2027\ufe13\ufe52\ufe55\uff07\uff0e\uff1a"

// ParseOrigin is the origin a descriptor file, a config or the vectors name ("provider",
// "tool", or an alias such as "caller", which is "user"), any case, stripped.
func ParseOrigin(name string) (errorclassv1.Origin, error) {
	word := lower(strip(name))
	if alias, ok := originAliases[word]; ok {
		word = alias
	}
	if i := slices.Index(originNames[:], word); i >= 0 {
		return errorclassv1.Origin(i), nil
	}
	return 0, fmt.Errorf("errorclass: %q is not an origin (%s)", name, strings.Join(originNames[:], ", "))
}

// OriginName is the origin's name as ParseOrigin reads it ("provider"); a number the
// proto does not define is spelt as that number.
func OriginName(o errorclassv1.Origin) string {
	if originKnown(o) {
		return originNames[o]
	}
	return fmt.Sprint(int32(o))
}

func originKnown(o errorclassv1.Origin) bool { return o >= 0 && int(o) < len(originNames) }

func httpStatusOK(s *int32) bool { return s == nil || (*s >= 100 && *s <= 599) }

func grpcStatusOK(s *int32) bool { return s == nil || (*s >= 0 && int(*s) <= maxGRPCCode) }

// maxGRPCCode is the largest gRPC status number (16, UNAUTHENTICATED).
var maxGRPCCode = func() int {
	top := 0
	for _, n := range grpcCodes {
		top = max(top, int(n))
	}
	return top
}()

// Fit is what the builders (Describe, DescribeResponse, DescribeFinishReason, ...) do so
// that a descriptor they built is never refused: names (the type, supertypes, causes'
// types) stripped and cut to MaxTypeNameChars; empty supertypes dropped and the first
// MaxSupertypes kept; causes without a type dropped and the first MaxCauses kept; codes
// stripped and cut; messages made UTF-8 and cut; statuses out of range and an unknown
// origin left out; language and provider stripped, lower-cased and cut; attributes with
// an empty or over-long key dropped, values cut, and at most MaxAttributes kept (the
// keys first in code-point order, since a map has no order). It returns a new
// descriptor; d is not changed, and nil gives nil.
func Fit(d *errorclassv1.ExceptionDescriptor) *errorclassv1.ExceptionDescriptor {
	if d == nil {
		return nil
	}
	out := &errorclassv1.ExceptionDescriptor{
		Type:       fitName(d.GetType(), MaxTypeNameChars),
		Supertypes: fitNames(d.GetSupertypes()),
		HttpStatus: fitStatus(d.HttpStatus, httpStatusOK),
		GrpcStatus: fitStatus(d.GrpcStatus, grpcStatusOK),
		Origin:     d.GetOrigin(),
		Code:       fitName(d.GetCode(), MaxCodeChars),
		Message:    cut(validText(d.GetMessage()), MaxMessageChars),
		Language:   cut(label(d.GetLanguage()), MaxLabelChars),
		Provider:   cut(label(d.GetProvider()), MaxLabelChars),
		Attributes: fitAttributes(d.GetAttributes()),
	}
	if !originKnown(out.Origin) {
		out.Origin = errorclassv1.Origin_ORIGIN_UNSPECIFIED
	}
	for _, c := range d.GetCauses() {
		if len(out.Causes) == MaxCauses {
			break
		}
		kind := fitName(c.GetType(), MaxTypeNameChars)
		if kind == "" {
			continue
		}
		out.Causes = append(out.Causes, &errorclassv1.Cause{
			Type:       kind,
			Supertypes: fitNames(c.GetSupertypes()),
			HttpStatus: fitStatus(c.HttpStatus, httpStatusOK),
			GrpcStatus: fitStatus(c.GrpcStatus, grpcStatusOK),
			Code:       fitName(c.GetCode(), MaxCodeChars),
			Message:    cut(validText(c.GetMessage()), MaxMessageChars),
		})
	}
	return out
}

func fitName(text string, limit int) string { return cut(strip(validText(text)), limit) }

func fitNames(names []string) []string {
	var out []string
	for _, name := range names {
		if len(out) == MaxSupertypes {
			break
		}
		if name = fitName(name, MaxTypeNameChars); name != "" {
			out = append(out, name)
		}
	}
	return out
}

func fitStatus(s *int32, ok func(*int32) bool) *int32 {
	if s == nil || !ok(s) {
		return nil
	}
	return proto.Int32(*s)
}

func fitAttributes(attributes map[string]string) map[string]string {
	keys := make([]string, 0, len(attributes))
	for key := range attributes {
		if key != "" && chars(key) <= MaxAttributeKeyChars {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys) // byte order of UTF-8 is code-point order
	out := make(map[string]string, min(len(keys), MaxAttributes))
	for _, key := range keys {
		if len(out) == MaxAttributes {
			break
		}
		out[validText(key)] = cut(validText(attributes[key]), MaxAttributeValueChars)
	}
	return out
}

// FieldViolation is one field the service refuses, named by its path as the service
// names it (`descriptor.causes[1].type`), with the service's words.
type FieldViolation struct {
	Field       string
	Description string
}

// Validate is the descriptor as the service would accept it, normalised as the service
// normalises it (names, codes and labels stripped, labels lower-cased, messages made
// UTF-8 and cut to MaxMessageChars), or every field it would refuse, named by path: what
// the service answers INVALID_ARGUMENT with, without a call. Unlike Fit it cuts nothing
// else and drops nothing: a descriptor you wrote by hand is either right or refused.
func Validate(d *errorclassv1.ExceptionDescriptor) (*errorclassv1.ExceptionDescriptor, []FieldViolation) {
	v := &violations{prefix: "descriptor"}
	if d == nil {
		d = &errorclassv1.ExceptionDescriptor{}
	}
	out := &errorclassv1.ExceptionDescriptor{Type: v.typeName("type", d.GetType())}
	out.Supertypes = v.typeNames("supertypes", d.GetSupertypes())
	causes := d.GetCauses()
	if len(causes) > MaxCauses {
		v.add("causes", fmt.Sprintf("%d causes exceed the limit of %d", len(causes), MaxCauses))
		causes = nil
	}
	for i, c := range causes {
		name := fmt.Sprintf("causes[%d]", i)
		out.Causes = append(out.Causes, &errorclassv1.Cause{
			Type:       v.typeName(name+".type", c.GetType()),
			Supertypes: v.typeNames(name+".supertypes", c.GetSupertypes()),
			HttpStatus: v.httpStatus(name+".http_status", c.HttpStatus),
			GrpcStatus: v.grpcStatus(name+".grpc_status", c.GrpcStatus),
			Code:       v.bounded(name+".code", c.GetCode(), MaxCodeChars),
			Message:    cut(validText(c.GetMessage()), MaxMessageChars),
		})
	}
	out.Attributes = v.attributes(d.GetAttributes())
	out.HttpStatus = v.httpStatus("http_status", d.HttpStatus)
	out.GrpcStatus = v.grpcStatus("grpc_status", d.GrpcStatus)
	out.Origin = d.GetOrigin()
	if !originKnown(out.Origin) {
		v.add("origin", fmt.Sprintf("%d is not a known origin (0-%d)", out.Origin, len(originNames)-1))
		out.Origin = errorclassv1.Origin_ORIGIN_UNSPECIFIED
	}
	out.Code = v.bounded("code", d.GetCode(), MaxCodeChars)
	out.Message = cut(validText(d.GetMessage()), MaxMessageChars)
	out.Language = lower(v.bounded("language", d.GetLanguage(), MaxLabelChars))
	out.Provider = lower(v.bounded("provider", d.GetProvider(), MaxLabelChars))
	if len(v.list) > 0 {
		return nil, v.list
	}
	return out, nil
}

// violations collects what Validate refuses, in the service's order and words
// (classifier/descriptor.py), so that all of them come back at once.
type violations struct {
	prefix string
	list   []FieldViolation
}

func (v *violations) add(name, description string) {
	v.list = append(v.list, FieldViolation{Field: v.prefix + "." + name, Description: description})
}

func (v *violations) bounded(name, value string, limit int) string {
	value = strip(validText(value))
	if n := chars(value); n > limit {
		v.add(name, fmt.Sprintf("%d characters exceed the limit of %d", n, limit))
	}
	return value
}

func (v *violations) typeName(name, value string) string {
	value = v.bounded(name, value, MaxTypeNameChars)
	if value == "" {
		v.add(name, "must not be empty")
	}
	return value
}

func (v *violations) typeNames(name string, values []string) []string {
	if len(values) > MaxSupertypes {
		v.add(name, fmt.Sprintf("%d entries exceed the limit of %d", len(values), MaxSupertypes))
		return nil
	}
	var out []string
	for i, value := range values {
		if kept := v.typeName(fmt.Sprintf("%s[%d]", name, i), value); kept != "" {
			out = append(out, kept)
		}
	}
	return out
}

func (v *violations) httpStatus(name string, s *int32) *int32 {
	if !httpStatusOK(s) {
		v.add(name, fmt.Sprintf("%d is not an HTTP status (100-599)", *s))
		return nil
	}
	return fitStatus(s, httpStatusOK)
}

func (v *violations) grpcStatus(name string, s *int32) *int32 {
	if !grpcStatusOK(s) {
		v.add(name, fmt.Sprintf("%d is not a gRPC status code (0-%d)", *s, maxGRPCCode))
		return nil
	}
	return fitStatus(s, grpcStatusOK)
}

func (v *violations) attributes(attributes map[string]string) map[string]string {
	if len(attributes) > MaxAttributes {
		v.add("attributes", fmt.Sprintf("%d attributes exceed the limit of %d", len(attributes), MaxAttributes))
		return nil
	}
	keys := make([]string, 0, len(attributes))
	for key := range attributes {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	var out map[string]string
	for _, key := range keys {
		value := validText(attributes[key])
		switch {
		case key == "":
			v.add("attributes", "an attribute key must not be empty")
		case chars(key) > MaxAttributeKeyChars:
			v.add(fmt.Sprintf("attributes[%s]", pythonRepr(cut(key, 40))),
				fmt.Sprintf("key exceeds the limit of %d characters", MaxAttributeKeyChars))
		case chars(value) > MaxAttributeValueChars:
			v.add(fmt.Sprintf("attributes[%s]", pythonRepr(key)),
				fmt.Sprintf("value exceeds the limit of %d characters", MaxAttributeValueChars))
		}
		if out == nil {
			out = map[string]string{}
		}
		out[validText(key)] = value
	}
	return out
}

// pythonRepr spells a key as the service's paths do (Python's repr of a str:
// `attributes['model']`), so a path Validate names is the one the service names.
func pythonRepr(text string) string {
	quote := '\''
	if strings.ContainsRune(text, '\'') && !strings.ContainsRune(text, '"') {
		quote = '"'
	}
	var b strings.Builder
	b.WriteRune(quote)
	for _, r := range validText(text) {
		switch {
		case r == quote || r == '\\':
			b.WriteRune('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteRune(quote)
	return b.String()
}

// utf8Descriptor is d when every text in it is UTF-8, else a copy with each bad byte
// replaced by U+FFFD: protobuf refuses to marshal it otherwise, and the call would fail
// on this side (as INTERNAL, which would count against the service in the breaker).
func utf8Descriptor(d *errorclassv1.ExceptionDescriptor) *errorclassv1.ExceptionDescriptor {
	if d == nil || descriptorIsUTF8(d) {
		return d
	}
	out := proto.Clone(d).(*errorclassv1.ExceptionDescriptor)
	out.Type, out.Code, out.Message = validText(out.Type), validText(out.Code), validText(out.Message)
	out.Language, out.Provider = validText(out.Language), validText(out.Provider)
	out.Supertypes = validTexts(out.Supertypes)
	if out.Attributes != nil {
		attributes := make(map[string]string, len(out.Attributes))
		for k, v := range out.Attributes {
			attributes[validText(k)] = validText(v)
		}
		out.Attributes = attributes
	}
	for _, c := range out.Causes {
		c.Type, c.Code, c.Message = validText(c.Type), validText(c.Code), validText(c.Message)
		c.Supertypes = validTexts(c.Supertypes)
	}
	return out
}

func validTexts(texts []string) []string {
	for i, text := range texts {
		texts[i] = validText(text)
	}
	return texts
}

func descriptorIsUTF8(d *errorclassv1.ExceptionDescriptor) bool {
	texts := append([]string{d.Type, d.Code, d.Message, d.Language, d.Provider}, d.Supertypes...)
	for k, v := range d.Attributes {
		texts = append(texts, k, v)
	}
	for _, c := range d.Causes {
		texts = append(texts, c.Type, c.Code, c.Message)
		texts = append(texts, c.Supertypes...)
	}
	for _, text := range texts {
		if !utf8.ValidString(text) {
			return false
		}
	}
	return true
}
