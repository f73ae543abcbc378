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
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
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
