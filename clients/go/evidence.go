package errorclass

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/grpc/status"
)

// evidence is what one error in the chain says beyond its type and text.
type evidence struct {
	status     *int32
	grpc       *int32
	code       string
	message    string // the provider's own message, when the error keeps it apart
	attributes map[string]string
	timeout    bool
}

// googleErrors keep the HTTP status in an int field `Code` and the status name in
// `Status` (genai) or in the JSON `Body` (googleapi); elsewhere `Code` means other things.
var googleErrors = map[string]bool{
	"genai.APIError": true, "*genai.APIError": true, "*googleapi.Error": true, "googleapi.Error": true,
}

// evidenceOf reads, from one error, what the SDKs put there (their sources, read for it):
//   - grpc-go: GRPCStatus() *status.Status (every error that carries a status);
//   - aws-sdk-go-v2 / smithy-go: ErrorCode() (smithy.APIError: the service's error type,
//     ThrottlingException), HTTPStatusCode() (*awshttp.ResponseError, *smithyhttp.ResponseError);
//   - openai-go, anthropic-sdk-go and other Stainless SDKs (*apierror.Error): the fields
//     StatusCode, Code, Message, and RawJSON() (openai-go: the body's `error` object;
//     anthropic-sdk-go: the whole body, `{"type": "error", "error": {"type": ...}}`);
//     a stream's error event (openai-go's *ssestream.StreamError): Event.Data;
//   - google.golang.org/genai's APIError: Code (the HTTP status), Status
//     (RESOURCE_EXHAUSTED), Message; google.golang.org/api's *googleapi.Error: Code, Body;
//   - any error with Timeout() true (net.Error, context.DeadlineExceeded, os.ErrDeadlineExceeded).
//
// Reading never fails the caller: a panicking method gives what was read before it.
func evidenceOf(e error) (ev evidence) {
	defer func() { _ = recover() }()
	if t, ok := e.(interface{ Timeout() bool }); ok && t.Timeout() {
		ev.timeout = true
	}
	if g, ok := e.(interface{ GRPCStatus() *status.Status }); ok {
		if st := g.GRPCStatus(); st != nil {
			ev.grpc = number(int(st.Code()))
		}
	}
	if h, ok := e.(interface{ HTTPStatusCode() int }); ok {
		ev.status = httpStatus(h.HTTPStatusCode())
	}
	if a, ok := e.(interface {
		ErrorCode() string
		ErrorMessage() string
	}); ok {
		// A Bedrock stream's exception event that the SDK has no type for is a
		// smithy.GenericAPIError coded as the event is named (throttlingException).
		ev.code = streamExceptionCode(strip(a.ErrorCode()))
		ev.message = strip(a.ErrorMessage())
	}
	fields(e, &ev)
	streamed := ev.status != nil && *ev.status < 300
	if streamed {
		// A status below 300 is the 200 a stream began with, not the error's: the
		// anthropic-sdk-go makes an *apierror.Error of a stream's `error` event with it.
		ev.status = nil
	}
	if r, ok := e.(interface{ RawJSON() string }); ok {
		if streamed {
			ev.read(readStreamError("error", r.RawJSON()))
		} else {
			ev.body(r.RawJSON())
		}
	}
	ev.keep(headerEvidence(responseHeader(reflect.ValueOf(e), 0)))
	return ev
}

// fields reads the struct fields the SDKs keep their evidence in.
func fields(e error, ev *evidence) {
	v := reflect.ValueOf(e)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	google := googleErrors[typeName(e)]
	if ev.status == nil {
		if n, ok := intField(v, "StatusCode"); ok {
			ev.status = httpStatus(n)
		} else if n, ok := intField(v, "Code"); ok && google {
			ev.status = httpStatus(n)
		}
	}
	if text, ok := stringField(v, "Message"); ok && ev.message == "" {
		ev.message = text
	}
	if google {
		if name, ok := stringField(v, "Status"); ok {
			ev.googleStatus(name)
		}
		if body, ok := stringField(v, "Body"); ok {
			ev.body(body)
		}
		if details := v.FieldByName("Details"); details.IsValid() && details.CanInterface() {
			// genai's APIError keeps google.rpc.Status's details as decoded JSON.
			if data, err := json.Marshal(details.Interface()); err == nil {
				value, _ := parseJSON(data)
				ev.keep(detailEvidence(value))
			}
		}
		return
	}
	if code, ok := stringField(v, "Code"); ok && ev.code == "" && !repeatsStatus(code, ev.status) {
		ev.code = code
	}
	if event := v.FieldByName("Event"); event.IsValid() && event.Kind() == reflect.Struct {
		// openai-go's *ssestream.StreamError: the error event of a stream, its SSE event
		// name in Event.Type and its data, `{"error": {"code": "rate_limit_exceeded",
		// ...}}`, in Event.Data: read as the spec's stream_error.
		kind, _ := stringField(event, "Type")
		if data := event.FieldByName("Data"); data.IsValid() && data.Kind() == reflect.Slice && data.Type().Elem().Kind() == reflect.Uint8 {
			ev.read(readStreamError(kind, string(data.Bytes())))
		}
	}
}

// body fills what the error's fields left empty from the provider's error body it
// keeps (readErrorBody, the spec's error_body rules).
func (ev *evidence) body(text string) { ev.read(readErrorBody(ev.status, nil, text)) }

// read fills what the error's fields left empty from what its body or stream event says.
func (ev *evidence) read(b bodyEvidence) {
	if ev.code == "" {
		ev.code = b.code
	}
	if ev.grpc == nil {
		ev.grpc = b.grpc
	}
	if ev.message == "" {
		ev.message = b.message
	}
	ev.keep(b.attributes)
}

// keep adds the attributes the evidence does not have yet (what was read first wins).
func (ev *evidence) keep(attributes map[string]string) {
	for k, v := range attributes {
		if _, had := ev.attributes[k]; !had {
			if ev.attributes == nil {
				ev.attributes = map[string]string{}
			}
			ev.attributes[k] = v
		}
	}
}

var headerType = reflect.TypeFor[http.Header]()

// responseHeader is the provider's response headers an SDK's error keeps (their sources,
// read for it): openai-go's and anthropic-sdk-go's *apierror.Error in Response
// (*http.Response); aws-sdk-go-v2's *awshttp.ResponseError and smithy-go's
// *smithyhttp.ResponseError in Response (a *smithyhttp.Response embedding the
// *http.Response); google.golang.org/api's *googleapi.Error in Header. Nil when it keeps
// none.
func responseHeader(v reflect.Value, depth int) http.Header {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || depth > 2 {
		return nil
	}
	if header := safeField(v, "Header"); header.IsValid() && header.Type() == headerType && header.CanInterface() {
		return header.Interface().(http.Header)
	}
	if response := safeField(v, "Response"); response.IsValid() {
		return responseHeader(response, depth+1)
	}
	return nil
}

// safeField is v's field of that name (promoted ones too), invalid when it has none or
// reaching it passes a nil embedded pointer (where FieldByName panics).
func safeField(v reflect.Value, name string) reflect.Value {
	f, ok := v.Type().FieldByName(name)
	if !ok {
		return reflect.Value{}
	}
	field, err := v.FieldByIndexErr(f.Index)
	if err != nil {
		return reflect.Value{}
	}
	return field
}

// bodyEvidence is what a provider's HTTP error says beyond its status.
type bodyEvidence struct {
	code       string
	grpc       *int32
	message    string
	attributes map[string]string
}

// readErrorBody reads a provider's HTTP error (the status when known, the headers, the
// body as text) as every client reads it (clients/spec/README.md, error_body). A body
// larger than MaxBodyBytes, not JSON, or not a JSON object gives nothing from the body.
// Then, in order:
//  1. AWS JSON (Bedrock): the header x-amzn-ErrorType when not blank, else the body's
//     __type; its text before the first ":", after the last "#", stripped, is the code,
//     the body's message (else Message) the message.
//  2. An error object is the error: its message is the message, and with the body's type
//     "error" and a text error.type (Anthropic) the code is error.type and
//     error.details.error_code the attribute error_code; else with an error.status that is
//     a gRPC status name (Google) that name is the code and its number the gRPC status;
//     else (OpenAI, Azure OpenAI) the code is error.code, text or a whole number, unless it
//     only repeats the HTTP status (Azure's "429").
//  3. A text error ({"error": "model not found"}) is the message.
//  4. A body whose message is text and that has no error is the error object itself (an
//     SDK that keeps the inner object, a provider with no envelope), read as in 2 without
//     the Anthropic case.
//
// Besides, whatever the body: the headers of evidenceHeaders and the error object's
// Google details (googleDetails) are attributes.
func readErrorBody(status *int32, header http.Header, text string) bodyEvidence {
	var body map[string]any
	if len(text) <= MaxBodyBytes {
		body = jsonObject(text)
	}
	out := readBody(status, header, body)
	if headers := headerEvidence(header); len(headers) > 0 {
		if out.attributes == nil {
			out.attributes = map[string]string{}
		}
		for k, v := range headers {
			out.attributes[k] = v
		}
	}
	return out
}

// readStreamError reads an error event inside a stream that began with a 200, as every
// client reads it (clients/spec/README.md, stream_error): event is the SSE event's name
// or a Bedrock exception event's type (empty when none), data its data. A Bedrock
// exception (an event ending in "Exception") gives the code as the non-stream API spells
// it (throttlingException is ThrottlingException) and the message of its JSON data;
// anything else is data read as an error body with no status and no headers, except that
// a Responses API response.failed event's error (the event so named, or data whose type
// says so) is its response.error.
func readStreamError(event, data string) bodyEvidence {
	var body map[string]any
	if len(data) <= MaxBodyBytes {
		body = jsonObject(data)
	}
	if strings.HasSuffix(event, "Exception") {
		message := textOf(body["message"])
		if message == "" {
			message = textOf(body["Message"])
		}
		return bodyEvidence{code: streamExceptionCode(event), message: message}
	}
	if event == "response.failed" || textOf(body["type"]) == "response.failed" {
		response, _ := body["response"].(map[string]any)
		body = map[string]any{"error": response["error"]}
	}
	return readBody(nil, nil, body)
}

// streamExceptionCode is a Bedrock stream exception event's type as the non-stream API
// spells the error (its first letter upper-cased): ThrottlingException of
// throttlingException. Any other code is returned as it is.
func streamExceptionCode(code string) string {
	if !strings.HasSuffix(code, "Exception") || code == "" || code[0] < 'a' || code[0] > 'z' {
		return code
	}
	return strings.ToUpper(code[:1]) + code[1:]
}

// readBody is readErrorBody's reading of the body (a JSON object, or nil).
func readBody(status *int32, header http.Header, body map[string]any) bodyEvidence {
	code := awsErrorType(headerValue(header, "x-amzn-ErrorType"))
	if code == "" {
		code = awsErrorType(textOf(body["__type"]))
	}
	if code != "" {
		message := textOf(body["message"])
		if message == "" {
			message = textOf(body["Message"])
		}
		return bodyEvidence{code: code, message: message}
	}
	switch inner := body["error"].(type) {
	case map[string]any:
		return errorObject(body, inner, status, true)
	case string:
		return bodyEvidence{message: strip(inner)}
	case nil:
		if _, ok := body["message"].(string); ok {
			return errorObject(body, body, status, false)
		}
	}
	return bodyEvidence{}
}

// errorObject reads an error object (the body's error, or the body itself).
func errorObject(body, inner map[string]any, status *int32, anthropic bool) bodyEvidence {
	out := bodyEvidence{message: textOf(inner["message"]), attributes: detailEvidence(inner["details"])}
	if kind, ok := inner["type"].(string); ok && anthropic && body["type"] == "error" {
		out.code = strip(kind)
		if details, ok := inner["details"].(map[string]any); ok {
			if detail := textOf(details["error_code"]); detail != "" {
				out.attributes = map[string]string{"error_code": detail}
			}
		}
		return out
	}
	if name := textOf(inner["status"]); name != "" {
		if n, known := grpcCodes[name]; known {
			out.code, out.grpc = name, &n
			return out
		}
	}
	if code := codeText(inner["code"]); code != "" && !repeatsStatus(code, status) {
		out.code = code
	}
	return out
}

// codeText is a provider's code: text, stripped, or a whole number written in decimal.
func codeText(value any) string {
	switch v := value.(type) {
	case string:
		return strip(v)
	case json.Number:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
		if f, err := v.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return strconv.FormatFloat(f, 'f', 0, 64)
		}
	}
	return ""
}

// repeatsStatus: a code that only repeats the HTTP status (Azure's "429") is no code.
func repeatsStatus(code string, status *int32) bool {
	return status != nil && code == strconv.Itoa(int(*status))
}

// awsErrorType is the error type of an AWS JSON error (x-amzn-ErrorType or __type):
// ThrottlingException of "ThrottlingException:http://internal.amazon.com/..." and
// ValidationException of "com.amazon.bedrock#ValidationException".
func awsErrorType(value string) string {
	name, _, _ := strings.Cut(value, ":")
	return strip(name[strings.LastIndex(name, "#")+1:])
}

// headerEvidence is the headers of evidenceHeaders (their names in any case) that have
// a value, as attributes: HeaderAttributePrefix + the name in lower case, the value
// stripped and cut to MaxEvidenceChars.
func headerEvidence(header http.Header) map[string]string {
	if len(header) == 0 {
		return nil
	}
	var out map[string]string
	for _, name := range evidenceHeaders {
		if value := strip(headerValue(header, name)); value != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[HeaderAttributePrefix+name] = cut(value, MaxEvidenceChars)
		}
	}
	return out
}

// googleDetail is one attribute a Google error's details give (facts.go lists them).
type googleDetail struct {
	attribute string
	typeURL   string
	field     string // a dotted path, violations[0].quotaId
}

// detailEvidence is what an error object's details (a list: google.rpc.Status's) say, as
// the attributes of googleDetails: for each, the first item of its type URL, its field
// when that is text (stripped, not empty, cut to MaxEvidenceChars).
func detailEvidence(details any) map[string]string {
	items, _ := details.([]any)
	if len(items) == 0 {
		return nil
	}
	var out map[string]string
	for _, detail := range googleDetails {
		for _, item := range items {
			object, _ := item.(map[string]any)
			if object == nil || object["@type"] != detail.typeURL {
				continue
			}
			if value, ok := pathValue(object, detail.field).(string); ok && strip(value) != "" {
				if out == nil {
					out = map[string]string{}
				}
				out[detail.attribute] = cut(strip(value), MaxEvidenceChars)
			}
			break
		}
	}
	return out
}

// pathValue is the value at a dotted path with list indexes (violations[0].quotaId), or nil.
func pathValue(value any, path string) any {
	for _, part := range strings.Split(path, ".") {
		name, index, indexed := strings.Cut(part, "[")
		if name != "" {
			object, _ := value.(map[string]any)
			value = object[name]
		}
		if indexed {
			n, err := strconv.Atoi(strings.TrimSuffix(index, "]"))
			items, _ := value.([]any)
			if err != nil || n < 0 || n >= len(items) {
				return nil
			}
			value = items[n]
		}
	}
	return value
}

// headerValue is the header's first value, its name in any case.
func headerValue(header http.Header, name string) string {
	if v := header.Get(name); v != "" {
		return v
	}
	for key, values := range header {
		if strings.EqualFold(key, name) && len(values) > 0 {
			return values[0]
		}
	}
	return ""
}

// jsonObject is text parsed as one JSON object (numbers kept as written), or nil.
func jsonObject(text string) map[string]any {
	value, ok := parseJSON([]byte(text))
	if !ok {
		return nil
	}
	object, _ := value.(map[string]any)
	return object
}

// parseJSON is data as one JSON value, numbers as json.Number; ok is false for anything
// else (trailing text included).
func parseJSON(data []byte) (value any, ok bool) {
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	if decoder.Decode(&value) != nil {
		return nil, false
	}
	if _, err := decoder.Token(); err != io.EOF {
		return nil, false
	}
	return value, true
}

// googleStatus takes a Google status name (RESOURCE_EXHAUSTED) as the code and gRPC status.
func (ev *evidence) googleStatus(name string) {
	n, known := grpcCodes[strip(name)]
	if !known {
		return
	}
	if ev.code == "" {
		ev.code = strip(name)
	}
	if ev.grpc == nil {
		ev.grpc = &n
	}
}

func intField(v reflect.Value, name string) (int, bool) {
	f := v.FieldByName(name)
	if !f.IsValid() {
		return 0, false
	}
	switch f.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(f.Int()), true
	}
	return 0, false
}

func stringField(v reflect.Value, name string) (string, bool) {
	f := v.FieldByName(name)
	if !f.IsValid() || f.Kind() != reflect.String {
		return "", false
	}
	text := strip(f.String())
	return text, text != ""
}

// textOf is a JSON value's text, stripped ("" for anything but text).
func textOf(v any) string {
	text, _ := v.(string)
	return strip(text)
}

func httpStatus(n int) *int32 {
	if n < 100 || n > 599 {
		return nil
	}
	return number(n)
}

func number(n int) *int32 {
	v := int32(n)
	return &v
}
