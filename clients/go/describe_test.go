package errorclass

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
	"github.com/errorclass/classifier/clients/go/internal/sdkshapes/genai"
)

func types(d *errorclassv1.ExceptionDescriptor) []string {
	out := []string{d.Type}
	for _, c := range d.Causes {
		out = append(out, c.Type)
	}
	return out
}

func TestAnHTTPClientTimeoutIsAURLErrorThatSaysTimeout(t *testing.T) {
	hang := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer server.Close()
	defer close(hang)
	client := &http.Client{Timeout: 50 * time.Millisecond}
	_, err := client.Get(server.URL)
	if err == nil {
		t.Fatal("the request did not time out")
	}
	d := Describe(err, errorclassv1.Origin_ORIGIN_PROVIDER, "OpenAI")
	if d.Type != "*url.Error" || d.Language != "go" || d.Provider != "openai" {
		t.Fatalf("got %v %q %q", types(d), d.Language, d.Provider)
	}
	if d.Attributes[AttrTimeout] != "true" || d.Attributes[AttrContext] != "deadline_exceeded" {
		t.Fatalf("attributes %v (chain %v)", d.Attributes, types(d))
	}
	if !strings.Contains(d.Message, "Client.Timeout exceeded") {
		t.Fatalf("message %q", d.Message)
	}
}

func TestARefusedConnectionKeepsTheWholeChain(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := listener.Addr().String()
	listener.Close()
	_, err = http.Get("http://" + addr)
	d := Describe(err, errorclassv1.Origin_ORIGIN_PROVIDER, "")
	got := strings.Join(types(d), " ")
	if got != "*url.Error *net.OpError *os.SyscallError syscall.Errno" {
		t.Fatalf("chain %s", got)
	}
	if _, set := d.Attributes[AttrTimeout]; set {
		t.Fatalf("a refusal is no timeout: %v", d.Attributes)
	}
}

type loop struct{ next error }

func (l *loop) Error() string { return "loop" }
func (l *loop) Unwrap() error { return l.next }

func TestTheChainIsDepthFirstEachErrorOnceAndBounded(t *testing.T) {
	_, pathErr := os.Open("/nonexistent/errorclass")
	a := fmt.Errorf("tool read_file: %w", pathErr)
	joined := errors.Join(a, context.Canceled, a)
	d := Describe(joined, errorclassv1.Origin_ORIGIN_TOOL, "")
	got := strings.Join(types(d), " ")
	if got != "*errors.joinError *fmt.wrapError *fs.PathError syscall.Errno *errors.errorString" {
		t.Fatalf("chain %s", got)
	}
	if d.Attributes[AttrContext] != "canceled" {
		t.Fatalf("attributes %v", d.Attributes)
	}
	var pe *fs.PathError
	if !errors.As(joined, &pe) {
		t.Fatal("not a path error")
	}

	cycle := &loop{}
	cycle.next = &loop{next: cycle}
	if n := len(Describe(cycle, 0, "").Causes); n != 1 {
		t.Fatalf("a cycle gave %d causes", n)
	}
	var deep error = errors.New("root")
	for i := range 100 {
		deep = fmt.Errorf("level %d: %w", i, deep)
	}
	if n := len(Describe(deep, 0, "").Causes); n != MaxCauses {
		t.Fatalf("%d causes, want the limit %d", n, MaxCauses)
	}
}

func TestAGRPCStatusAnywhereInTheChain(t *testing.T) {
	err := fmt.Errorf("call tool: %w", status.Error(codes.DeadlineExceeded, "deadline"))
	d := Describe(err, errorclassv1.Origin_ORIGIN_TOOL, "")
	if d.GrpcStatus == nil || *d.GrpcStatus != int32(codes.DeadlineExceeded) {
		t.Fatalf("grpc_status %v", d.GrpcStatus)
	}
	if d.Causes[0].Type != "*status.Error" || *d.Causes[0].GrpcStatus != 4 {
		t.Fatalf("causes %v", d.Causes)
	}
}

type panicky struct{}

func (*panicky) Error() string { panic("boom") }

func TestDescribeNeverPanicsAndKeepsTheLimits(t *testing.T) {
	var typedNil *panicky
	d := Describe(typedNil, 0, "")
	if d.Type != "*errorclass.panicky" || !strings.Contains(d.Message, "panicked") {
		t.Fatalf("got %q %q", d.Type, d.Message)
	}
	long := errors.New(strings.Repeat("é", MaxMessageChars+10))
	if n := len([]rune(Describe(long, 0, "").Message)); n != MaxMessageChars {
		t.Fatalf("message of %d characters", n)
	}
	if Describe(nil, 0, "") != nil {
		t.Fatal("a nil error has no descriptor")
	}
}

// Shapes of the SDKs' errors, as their sources declare them (the conformance suite
// raises the real ones against a loopback server).
type stainlessError struct {
	Code       string
	Message    string
	StatusCode int
	raw        string
}

func (e *stainlessError) Error() string  { return fmt.Sprintf("API error: %d", e.StatusCode) }
func (e stainlessError) RawJSON() string { return e.raw }

func TestAnSDKErrorsFieldsAndBodyAreRead(t *testing.T) {
	openai := &stainlessError{Code: "context_length_exceeded", Message: "maximum context length", StatusCode: 400}
	d := Describe(fmt.Errorf("chat: %w", openai), errorclassv1.Origin_ORIGIN_PROVIDER, "openai")
	if d.Code != "context_length_exceeded" || *d.HttpStatus != 400 || !strings.Contains(d.Message, "maximum context length") {
		t.Fatalf("got %q %v %q", d.Code, d.HttpStatus, d.Message)
	}
	anthropic := &stainlessError{StatusCode: 429, raw: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down","details":{"error_code":"ramp_limit_exceeded"}}}`}
	d = Describe(anthropic, errorclassv1.Origin_ORIGIN_PROVIDER, "anthropic")
	if d.Code != "rate_limit_error" || d.Attributes["error_code"] != "ramp_limit_exceeded" {
		t.Fatalf("got %q %v", d.Code, d.Attributes)
	}
	azure := &stainlessError{Code: "429", StatusCode: 429}
	if d = Describe(azure, 0, ""); d.Code != "" {
		t.Fatalf("a code that repeats the status is no code: %q", d.Code)
	}
}

// stainlessAPIError is openai-go's and anthropic-sdk-go's *apierror.Error as they declare
// it: the response it came from in Response.
type stainlessAPIError struct {
	Code       string
	Message    string
	StatusCode int
	Request    *http.Request
	Response   *http.Response
	raw        string
}

func (e *stainlessAPIError) Error() string  { return fmt.Sprintf("API error: %d", e.StatusCode) }
func (e stainlessAPIError) RawJSON() string { return e.raw }

// smithyResponse, smithyResponseError and awsResponseError are smithy-go's
// smithyhttp.Response and ResponseError and aws-sdk-go-v2's awshttp.ResponseError:
// the *http.Response embedded two levels down.
type smithyResponse struct{ *http.Response }

type smithyResponseError struct {
	Response *smithyResponse
	Err      error
}

func (e *smithyResponseError) Error() string       { return "http response error: " + e.Err.Error() }
func (e *smithyResponseError) Unwrap() error       { return e.Err }
func (e *smithyResponseError) HTTPStatusCode() int { return e.Response.StatusCode }

type awsResponseError struct {
	*smithyResponseError
	RequestID string
}

// apiError is a smithy.APIError: bedrockruntime's types.ThrottlingException, or the
// smithy.GenericAPIError an event stream's unknown exception event becomes.
type apiError struct{ code, message string }

func (e *apiError) Error() string        { return e.code + ": " + e.message }
func (e *apiError) ErrorCode() string    { return e.code }
func (e *apiError) ErrorMessage() string { return e.message }

func TestAnSDKErrorKeepsItsResponsesRetryHeaders(t *testing.T) {
	header := http.Header{}
	header.Set("Retry-After", "2")
	header.Set("X-Ratelimit-Reset-Tokens", " 1s ")
	header.Set("X-Request-Id", "req_1") // not evidence: not kept
	openai := &stainlessAPIError{StatusCode: 429, Code: "rate_limit_exceeded", Message: "slow down",
		Response: &http.Response{StatusCode: 429, Header: header}}
	d := Describe(fmt.Errorf("chat: %w", openai), errorclassv1.Origin_ORIGIN_PROVIDER, "openai")
	want := map[string]string{
		HeaderAttributePrefix + "retry-after":              "2",
		HeaderAttributePrefix + "x-ratelimit-reset-tokens": "1s",
	}
	if !reflect.DeepEqual(d.Attributes, want) {
		t.Fatalf("openai-go: attributes %v, want %v", d.Attributes, want)
	}
	// aws-sdk-go-v2: *smithy.OperationError > *awshttp.ResponseError > *types.ThrottlingException
	throttled := &awsResponseError{smithyResponseError: &smithyResponseError{
		Response: &smithyResponse{&http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"3"}}}},
		Err:      &apiError{code: "ThrottlingException", message: "Too many requests"},
	}}
	d = Describe(fmt.Errorf("operation error Bedrock Runtime: Converse: %w", throttled), errorclassv1.Origin_ORIGIN_PROVIDER, "bedrock")
	if d.Attributes[HeaderAttributePrefix+"retry-after"] != "3" || d.Code != "ThrottlingException" || *d.HttpStatus != 429 {
		t.Fatalf("aws-sdk-go-v2: %v %q %v", d.Attributes, d.Code, d.HttpStatus)
	}
	if d = Describe(&awsResponseError{}, 0, ""); d.Type != "*errorclass.awsResponseError" {
		t.Fatalf("an embedded nil pointer: %v", d)
	}
}

func TestGoogleErrorDetailsAreKept(t *testing.T) {
	quota := genai.APIError{Code: 429, Message: "You exceeded your current quota.", Status: "RESOURCE_EXHAUSTED",
		Details: []map[string]any{
			{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{
				map[string]any{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}}},
			{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "25s"},
		}}
	d := Describe(quota, errorclassv1.Origin_ORIGIN_PROVIDER, "gemini")
	want := map[string]string{
		"google.rpc.quota_failure.quota_id": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
		"google.rpc.retry_info.retry_delay": "25s",
	}
	if !reflect.DeepEqual(d.Attributes, want) || d.Code != "RESOURCE_EXHAUSTED" || *d.GrpcStatus != 8 {
		t.Fatalf("genai: %v %q %v", d.Attributes, d.Code, d.GrpcStatus)
	}
}

// sseEvent and streamError are openai-go's ssestream.Event and *ssestream.StreamError.
type sseEvent struct {
	Type string
	Data []byte
}

type streamError struct {
	Message string
	Event   sseEvent
}

func (e *streamError) Error() string { return e.Message }

func TestAStreamsErrorEventIsReadAsTheSpecsStreamError(t *testing.T) {
	data := `{"error": {"message": "Rate limit reached for gpt-4o", "type": "requests", "code": "rate_limit_exceeded"}}`
	openai := &streamError{Message: "received error while streaming: " + data, Event: sseEvent{Data: []byte(data)}}
	d := Describe(openai, errorclassv1.Origin_ORIGIN_PROVIDER, "openai")
	if d.Code != "rate_limit_exceeded" || d.HttpStatus != nil {
		t.Fatalf("openai-go: %q %v", d.Code, d.HttpStatus)
	}
	// anthropic-sdk-go makes an *apierror.Error of a stream's `error` event, with the
	// stream's 200: that status is not the error's.
	anthropic := &stainlessAPIError{StatusCode: 200, raw: `{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`,
		Response: &http.Response{StatusCode: 200, Header: http.Header{}}}
	d = Describe(anthropic, errorclassv1.Origin_ORIGIN_PROVIDER, "anthropic")
	if d.Code != "overloaded_error" || d.HttpStatus != nil || !strings.Contains(d.Message, "Overloaded") {
		t.Fatalf("anthropic-sdk-go: %q %v %q", d.Code, d.HttpStatus, d.Message)
	}
	// aws-sdk-go-v2: an event stream's exception event of no known type is a
	// smithy.GenericAPIError coded as the event is named.
	d = Describe(&apiError{code: "throttlingException", message: "Too many tokens"}, errorclassv1.Origin_ORIGIN_PROVIDER, "bedrock")
	if d.Code != "ThrottlingException" {
		t.Fatalf("bedrock: %q", d.Code)
	}
	// genai yields an APIError for a stream's error line: the body's status.
	d = Describe(genai.APIError{Code: 503, Message: "The model is overloaded.", Status: "UNAVAILABLE"}, errorclassv1.Origin_ORIGIN_PROVIDER, "gemini")
	if d.Code != "UNAVAILABLE" || *d.GrpcStatus != 14 || *d.HttpStatus != 503 {
		t.Fatalf("genai: %q %v %v", d.Code, d.GrpcStatus, d.HttpStatus)
	}
}

func TestLabelsAreLowerCasedAsPythonLowerCasesThem(t *testing.T) {
	// The right column is CPython 3.11's str.lower of the left (Unicode's full mapping).
	for _, c := range [][2]string{
		{"OpenAI", "openai"},
		{"OPEN\u0130I", "openi\u0307i"},
		{"\u039f\u0394\u039f\u03a3", "\u03bf\u03b4\u03bf\u03c2"},
		{"\u03a3", "\u03c3"},
		{"A\u03a3", "a\u03c2"},
		{"A\u03a3B", "a\u03c3b"},
		{"A\u03a3.", "a\u03c2."},
		{"A.\u03a3", "a.\u03c2"},
		{"A'\u03a3'", "a'\u03c2'"},
		{"\u03a3A", "\u03c3a"},
		{"AB\u03a3\u0301", "ab\u03c2\u0301"},
		{"1\u03a3", "1\u03c3"},
		{"a\u00ad\u03a3", "a\u00ad\u03c2"},
		{"\u01c5\u03a3", "\u01c6\u03c2"},
		{"\u212aELVIN", "kelvin"},
		{"Stra\u00dfe", "stra\u00dfe"},
		{"\u1e9e", "\u00df"},
		{"\u0130stanbul\u03a3 x", "i\u0307stanbul\u03c2 x"},
	} {
		if got := lower(c[0]); got != c[1] {
			t.Errorf("lower(%+q) = %+q, want %+q", c[0], got, c[1])
		}
	}
	d := Describe(errors.New("x"), 0, " \u0130BM\u03a3 ")
	if d.Provider != "i\u0307bm\u03c2" {
		t.Fatalf("provider %+q", d.Provider)
	}
}

// chatCompletion stands for an SDK response that keeps the JSON it was read from
// (openai-go's ChatCompletion and ChatCompletionChunk, anthropic-sdk-go's Message).
type chatCompletion struct{ raw string }

func (c chatCompletion) RawJSON() string { return c.raw }

func TestDescribeResponseJSONReadsWhatGoRuntimesHold(t *testing.T) {
	filtered := `{"object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}]}`
	genai := struct {
		Candidates []struct {
			FinishReason string `json:"finishReason"`
		} `json:"candidates"`
		ModelVersion string `json:"modelVersion"`
	}{Candidates: []struct {
		FinishReason string `json:"finishReason"`
	}{{FinishReason: "SAFETY"}}, ModelVersion: "gemini-2.5-flash"}
	converse := struct{ StopReason string }{StopReason: "guardrail_intervened"} // aws-sdk-go-v2 has no JSON tags
	stream := []chatCompletion{
		{`{"object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`},
		{`{"object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}`},
	}
	for _, c := range []struct {
		name     string
		response any
		provider string
		code     string
		model    string
	}{
		{"bytes", []byte(filtered), "", "content_filter", "gpt-4o"},
		{"raw message, azure", json.RawMessage(filtered), "azure", "content_filter", "gpt-4o"},
		{"RawJSON", chatCompletion{filtered}, "", "content_filter", "gpt-4o"},
		{"a stream of RawJSON chunks", stream, "", "content_filter", "gpt-4o"},
		{"a struct with JSON tags", genai, "", "SAFETY", "gemini-2.5-flash"},
		{"a struct without", converse, "", "guardrail_intervened", ""},
	} {
		d := DescribeResponseJSON(c.response, c.provider)
		if d == nil || d.Code != c.code || d.Attributes["model"] != c.model || d.Type != FinishReasonType || d.Language != Language {
			t.Errorf("%s: got %v", c.name, d)
		}
	}
	if d := DescribeResponseJSON(chatCompletion{strings.Replace(filtered, "content_filter", "stop", 1)}, ""); d != nil {
		t.Errorf("a normal stop is no failure: %v", d)
	}
}

func TestARawClientDescribesARefusalReturnedWithA200(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":"refusal"}`))
	}))
	defer server.Close()
	resp, err := http.Get(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if d := DescribeResponse(resp, body, errorclassv1.Origin_ORIGIN_PROVIDER, "anthropic"); d != nil {
		t.Fatalf("a 200 is no failed response: %v", d)
	}
	d := DescribeResponseJSON(body, "", Attribute("run_id", "r-7"))
	if d == nil || d.Code != "refusal" || d.Provider != "anthropic" || d.Origin != errorclassv1.Origin_ORIGIN_PROVIDER ||
		d.Message != "The anthropic response ended with the failure finish reason refusal." ||
		d.Attributes["model"] != "claude-sonnet-4-5" || d.Attributes["run_id"] != "r-7" {
		t.Fatalf("got %v", d)
	}
}

func TestDescribeResponseReadsBodiesWithoutAnEnvelopeAndTextErrors(t *testing.T) {
	bodies := map[string]string{
		"/bare":    `{"message": "Internal server error"}`,
		"/text":    `{"error": "model \"llama9\" not found, try pulling it first"}`,
		"/bedrock": `<html>Service Unavailable</html>`,
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bedrock" {
			w.Header().Set("X-Amzn-Errortype", "ServiceUnavailableException:")
		}
		w.WriteHeader(map[string]int{"/bare": 502, "/text": 404, "/bedrock": 503}[r.URL.Path])
		_, _ = w.Write([]byte(bodies[r.URL.Path]))
	}))
	defer server.Close()
	describe := func(path string) *errorclassv1.ExceptionDescriptor {
		resp, err := http.Get(server.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return DescribeResponse(resp, body, errorclassv1.Origin_ORIGIN_PROVIDER, " Ollama ")
	}
	if d := describe("/bare"); d.Message != "502 Bad Gateway\nInternal server error" || *d.HttpStatus != 502 || d.Provider != "ollama" {
		t.Errorf("bare: %q %v %q", d.Message, d.HttpStatus, d.Provider)
	}
	if d := describe("/text"); d.Message != "404 Not Found\nmodel \"llama9\" not found, try pulling it first" || d.Code != "" {
		t.Errorf("text: %q %q", d.Message, d.Code)
	}
	if d := describe("/bedrock"); d.Code != "ServiceUnavailableException" || d.Message != "503 Service Unavailable" {
		t.Errorf("bedrock: %q %q", d.Code, d.Message)
	}
}
