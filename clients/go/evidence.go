package errorclass

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/grpc/status"
)

// maxBodyBytes: larger bodies are not parsed (an error body is small), as
// classifier/client/http_bodies.py.
const maxBodyBytes = 256 * 1024

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
		ev.code = strings.TrimSpace(a.ErrorCode())
		ev.message = strings.TrimSpace(a.ErrorMessage())
	}
	fields(e, &ev)
	if r, ok := e.(interface{ RawJSON() string }); ok {
		ev.body(r.RawJSON())
	}
	if ev.code != "" {
		ev.code = cut(ev.code, MaxCodeChars)
	}
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
		return
	}
	if code, ok := stringField(v, "Code"); ok && ev.code == "" && !ev.isStatus(code) {
		ev.code = code
	}
	if event := v.FieldByName("Event"); event.IsValid() && event.Kind() == reflect.Struct {
		// openai-go's *ssestream.StreamError: the error event of a stream, its SSE data
		// `{"error": {"code": "rate_limit_exceeded", ...}}` in Event.Data.
		if data := event.FieldByName("Data"); data.IsValid() && data.Kind() == reflect.Slice && data.Type().Elem().Kind() == reflect.Uint8 {
			ev.body(string(data.Bytes()))
		}
	}
}

// body reads a provider's error body as classifier/client/http_bodies.py does:
//   - AWS JSON `{"__type": "...#ValidationException"}`: the code is that type;
//   - Anthropic `{"type": "error", "error": {"type", "message", "details": {"error_code"}}}`:
//     the code is error.type, details.error_code the attribute error_code;
//   - Google `{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}`: the code is
//     error.status, and so is the gRPC status;
//   - OpenAI, Azure `{"error": {"code", "message", "type"}}` (openai-go keeps the inner
//     object alone): the code is error.code unless it only repeats the HTTP status.
func (ev *evidence) body(text string) {
	if text == "" || len(text) > maxBodyBytes {
		return
	}
	var data map[string]any
	if json.Unmarshal([]byte(text), &data) != nil {
		return
	}
	if awsType, ok := data["__type"].(string); ok && ev.code == "" {
		name := strings.SplitN(awsType, ":", 2)[0]
		ev.code = strings.TrimSpace(name[strings.LastIndex(name, "#")+1:])
		if ev.message == "" {
			ev.message = textOf(data["message"]) + textOf(data["Message"])
		}
		return
	}
	inner, ok := data["error"].(map[string]any)
	if !ok {
		if _, hasCode := data["code"]; !hasCode {
			return
		}
		inner = data // openai-go's RawJSON: the error object itself
	}
	if ev.message == "" {
		ev.message = textOf(inner["message"])
	}
	if data["type"] == "error" {
		if kind := textOf(inner["type"]); kind != "" {
			if ev.code == "" {
				ev.code = kind
			}
			if details, ok := inner["details"].(map[string]any); ok {
				if code := textOf(details["error_code"]); code != "" {
					ev.attributes = map[string]string{"error_code": code}
				}
			}
			return
		}
	}
	if name := textOf(inner["status"]); name != "" {
		if _, known := grpcCodes[name]; known {
			ev.googleStatus(name)
			return
		}
	}
	if ev.code != "" {
		return
	}
	switch code := inner["code"].(type) {
	case string:
		if c := strings.TrimSpace(code); !ev.isStatus(c) {
			ev.code = c
		}
	case float64:
		if c := strconv.FormatFloat(code, 'f', -1, 64); !ev.isStatus(c) {
			ev.code = c
		}
	}
}

// googleStatus takes a Google status name (RESOURCE_EXHAUSTED) as the code and gRPC status.
func (ev *evidence) googleStatus(name string) {
	name = strings.TrimSpace(name)
	n, known := grpcCodes[name]
	if !known {
		return
	}
	if ev.code == "" {
		ev.code = name
	}
	if ev.grpc == nil {
		ev.grpc = &n
	}
}

// isStatus: a code that only repeats the HTTP status (Azure's "429") is not a code.
func (ev *evidence) isStatus(code string) bool {
	return code == "" || (ev.status != nil && code == strconv.Itoa(int(*ev.status)))
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
	text := strings.TrimSpace(f.String())
	return text, text != ""
}

func textOf(v any) string {
	text, _ := v.(string)
	return strings.TrimSpace(text)
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
