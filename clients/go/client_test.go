package errorclass

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// refusing is a server that refuses every descriptor as the classifier refuses a bad
// one: INVALID_ARGUMENT with a BadRequest naming the field.
type refusing struct {
	errorclassv1.UnimplementedErrorClassifierServer
	calls atomic.Int64
}

func (s *refusing) Classify(context.Context, *errorclassv1.ClassifyRequest) (*errorclassv1.ClassifyResponse, error) {
	s.calls.Add(1)
	st, _ := status.New(codes.InvalidArgument, "descriptor.type: must not be empty").WithDetails(&errdetails.BadRequest{
		FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "descriptor.type", Description: "must not be empty"}},
	})
	return nil, st.Err()
}

// answering keeps what it was sent and answers Timeout, or UNAVAILABLE while down.
type answering struct {
	errorclassv1.UnimplementedErrorClassifierServer
	mu   sync.Mutex
	got  []*errorclassv1.ExceptionDescriptor
	down atomic.Bool
}

func (s *answering) Classify(_ context.Context, r *errorclassv1.ClassifyRequest) (*errorclassv1.ClassifyResponse, error) {
	if s.down.Load() {
		return nil, status.Error(codes.Unavailable, "down")
	}
	s.mu.Lock()
	s.got = append(s.got, r.GetDescriptor_())
	s.mu.Unlock()
	return &errorclassv1.ClassifyResponse{ErrorClass: errorclassv1.RunErrorClass_RUN_ERROR_CLASS_TIMEOUT, ClassName: "Timeout"}, nil
}

func (s *answering) GetRuleset(context.Context, *errorclassv1.GetRulesetRequest) (*errorclassv1.RulesetInfo, error) {
	if s.down.Load() {
		return nil, status.Error(codes.Unavailable, "down")
	}
	return &errorclassv1.RulesetInfo{}, nil
}

func (s *answering) received() []*errorclassv1.ExceptionDescriptor {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*errorclassv1.ExceptionDescriptor(nil), s.got...)
}

func newClient(t *testing.T, target string, opts ...ClientOption) *Client {
	t.Helper()
	client, err := NewClient(target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

func TestInvalidArgumentSurfacesTheFieldViolations(t *testing.T) {
	impl := &refusing{}
	client := newClient(t, serve(t, impl), WithTimeout(5*time.Second))
	_, err := client.ClassifyDescriptor(context.Background(), &errorclassv1.ExceptionDescriptor{})
	var bad *DescriptorError
	if !errors.As(err, &bad) || len(bad.Violations) != 1 || bad.Violations[0].Field != "descriptor.type" {
		t.Fatalf("got %v", err)
	}
	if impl.calls.Load() != 1 {
		t.Fatalf("INVALID_ARGUMENT was sent %d times: it is never retried", impl.calls.Load())
	}
}

func TestDialIsTheDeprecatedNameOfNewClient(t *testing.T) {
	impl := &answering{}
	var opts []DialOption = []DialOption{WithTimeout(5 * time.Second)}
	client, err := Dial(serve(t, impl), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	answer, err := client.Classify(context.Background(), errors.New("slow"), errorclassv1.Origin_ORIGIN_PROVIDER, "openai")
	if err != nil || answer.ClassName != "Timeout" {
		t.Fatalf("got %v, %v", answer, err)
	}
	if client.breaker == nil || client.timeout != 5*time.Second {
		t.Fatal("Dial does not configure the client as NewClient does")
	}
}

func TestADeadServiceIsUnclassifiedAndTheBreakerStopsCalling(t *testing.T) {
	client := newClient(t, closedPort(t), WithTimeout(time.Second), WithBreaker(3, time.Hour))
	failure := errors.New("provider exploded")
	for i := range 3 {
		_, err := client.Classify(context.Background(), failure, errorclassv1.Origin_ORIGIN_PROVIDER, "openai")
		var unclassified *Unclassified
		if !errors.As(err, &unclassified) || unclassified.Code != codes.Unavailable || errors.Is(err, ErrBreakerOpen) {
			t.Fatalf("call %d: %v", i, err)
		}
		if d := unclassified.Descriptor(); d == nil || d.Message != "provider exploded" {
			t.Fatalf("call %d lost the descriptor: %v", i, d)
		}
	}
	start := time.Now()
	_, err := client.Classify(context.Background(), failure, errorclassv1.Origin_ORIGIN_PROVIDER, "openai")
	var unclassified *Unclassified
	if !errors.As(err, &unclassified) || !errors.Is(err, ErrBreakerOpen) || time.Since(start) > 50*time.Millisecond {
		t.Fatalf("the open breaker should answer at once: %v after %v", err, time.Since(start))
	}
	if client.breaker.opened != 1 {
		t.Fatalf("opened %d times", client.breaker.opened)
	}
}

func TestTheProbeClosesTheBreakerOnceTheServiceAnswers(t *testing.T) {
	impl := &answering{}
	impl.down.Store(true)
	client := newClient(t, serve(t, impl), WithTimeout(5*time.Second), WithAttempts(1), WithBreaker(3, 20*time.Millisecond))
	d := &errorclassv1.ExceptionDescriptor{Type: "T"}
	for range 3 {
		if _, err := client.ClassifyDescriptor(context.Background(), d); errors.Is(err, ErrBreakerOpen) {
			t.Fatalf("open before three failures: %v", err)
		}
	}
	if _, err := client.ClassifyDescriptor(context.Background(), d); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("not open after three failures: %v", err)
	}
	impl.down.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for !client.breaker.allow() {
		if time.Now().After(deadline) {
			t.Fatal("no probe closed the breaker within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if answer, err := client.ClassifyDescriptor(context.Background(), d); err != nil || answer.ClassName != "Timeout" {
		t.Fatalf("after the probe: %v, %v", answer, err)
	}
}

func TestOneAttemptTurnsRetriesOffAndKeepsTheThrottling(t *testing.T) {
	config, err := serviceConfig(1)
	if err != nil {
		t.Fatal(err)
	}
	var parsed map[string]any
	if err := json.Unmarshal([]byte(config), &parsed); err != nil {
		t.Fatal(err)
	}
	method := parsed["methodConfig"].([]any)[0].(map[string]any)
	if _, retried := method["retryPolicy"]; retried || parsed["retryThrottling"] == nil {
		t.Fatalf("service config %s", config)
	}
	if same, _ := serviceConfig(DefaultAttempts); same != serviceConfigJSON {
		t.Fatalf("the default is not facts.json's service config: %s", same)
	}
	server := &unavailable{}
	client := newClient(t, serve(t, server), WithAttempts(1), WithoutBreaker())
	for range 5 {
		_, _ = client.ClassifyDescriptor(context.Background(), &errorclassv1.ExceptionDescriptor{Type: "T"})
	}
	if n := server.attempts.Load(); n != 5 {
		t.Fatalf("5 calls with one attempt each reached the server %d times", n)
	}
}

func TestTheServiceNameOfTheFactsIsTheStubs(t *testing.T) {
	if ServiceName != errorclassv1.ErrorClassifier_ServiceDesc.ServiceName {
		t.Fatalf("facts.json names %q, the stubs %q", ServiceName, errorclassv1.ErrorClassifier_ServiceDesc.ServiceName)
	}
}

func TestARefusedRuntimeFactIsClassifysErrorAndNothingIsSent(t *testing.T) {
	impl := &answering{}
	client := newClient(t, serve(t, impl), WithTimeout(5*time.Second))
	_, err := client.Classify(context.Background(), errors.New("over"), errorclassv1.Origin_ORIGIN_INTERCEPTOR, "", Veto("two words"))
	var refused *FactError
	if !errors.As(err, &refused) || refused.Fact != "veto" {
		t.Fatalf("got %v", err)
	}
	if len(impl.received()) != 0 {
		t.Fatal("a refused fact was sent")
	}
	d := Describe(errors.New("over"), errorclassv1.Origin_ORIGIN_INTERCEPTOR, "", Veto("two words"), Attribute("stage", "link"), ProviderCalls(-1))
	for _, key := range []string{"veto", "stage", "provider_calls"} {
		if _, set := d.Attributes[key]; set {
			t.Fatalf("Describe sent the refused %s: %v", key, d.Attributes)
		}
	}
	d = Describe(errors.New("over"), errorclassv1.Origin_ORIGIN_INTERCEPTOR, "", Veto(" Legal-Hold "), Attribute("stage", "Parse"))
	if d.Attributes["veto"] != "legal-hold" || d.Attributes["stage"] != "parse" {
		t.Fatalf("attributes %v", d.Attributes)
	}
}

// advising answers RateLimited after the delay the descriptor's retry-after header says,
// as the service computes retry_after from the evidence, and no delay without one.
type advising struct {
	errorclassv1.UnimplementedErrorClassifierServer
}

func (s *advising) Classify(_ context.Context, r *errorclassv1.ClassifyRequest) (*errorclassv1.ClassifyResponse, error) {
	answer := &errorclassv1.ClassifyResponse{ErrorClass: errorclassv1.RunErrorClass_RUN_ERROR_CLASS_RATE_LIMITED, ClassName: "RateLimited", Retryable: true}
	source := HeaderAttributePrefix + "retry-after"
	if seconds, err := strconv.Atoi(r.GetDescriptor_().GetAttributes()[source]); err == nil {
		answer.RetryAfter, answer.RetryAfterSource = durationpb.New(time.Duration(seconds)*time.Second), source
	}
	return answer, nil
}

func TestAnAnswerSaysHowLongToWaitBeforeARetry(t *testing.T) {
	client := newClient(t, serve(t, &advising{}), WithTimeout(5*time.Second))
	openai := &stainlessAPIError{StatusCode: 429, Code: "rate_limit_exceeded",
		Response: &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"20"}}}}
	answer, err := client.Classify(context.Background(), openai, errorclassv1.Origin_ORIGIN_PROVIDER, "openai")
	if err != nil {
		t.Fatal(err)
	}
	wait, said := answer.RetryAfter()
	if !said || wait != 20*time.Second || answer.RetryAfterSource != "http.response.header.retry-after" || answer.Local {
		t.Fatalf("retry after %v %v from %q (local %v)", wait, said, answer.RetryAfterSource, answer.Local)
	}
	answer, err = client.Classify(context.Background(), errors.New("429"), errorclassv1.Origin_ORIGIN_PROVIDER, "openai")
	if err != nil {
		t.Fatal(err)
	}
	if wait, said := answer.RetryAfter(); said || wait != 0 || answer.ClassName != "RateLimited" {
		t.Fatalf("no header, yet retry after %v %v", wait, said)
	}
	var none *Answer
	if _, said := none.RetryAfter(); said {
		t.Fatal("a nil answer says a delay")
	}
}

func TestTextThatIsNotUTF8IsSentReplacedNotRefusedByProtobuf(t *testing.T) {
	impl := &answering{}
	client := newClient(t, serve(t, impl), WithTimeout(5*time.Second))
	latin1 := errors.New("open /data/r\xe9sum\xe9.txt: no such file or directory") // a Latin-1 file name
	if _, err := client.Classify(context.Background(), latin1, errorclassv1.Origin_ORIGIN_TOOL, ""); err != nil {
		t.Fatalf("Classify: %v", err)
	}
	bad := &errorclassv1.ExceptionDescriptor{Type: "T\xff", Attributes: map[string]string{"k\xfe": "v"}}
	if _, err := client.ClassifyDescriptor(context.Background(), bad); err != nil {
		t.Fatalf("ClassifyDescriptor: %v", err)
	}
	got := impl.received()
	if len(got) != 2 || got[0].Message != "open /data/r\uFFFDsum\uFFFD.txt: no such file or directory" ||
		got[1].Type != "T\uFFFD" || got[1].Attributes["k\uFFFD"] != "v" {
		t.Fatalf("received %v", got)
	}
	if bad.Type != "T\xff" {
		t.Fatal("the caller's descriptor was changed")
	}
}

func TestTheRuntimeContractAttributesComeFromOptions(t *testing.T) {
	d := Describe(context.DeadlineExceeded, errorclassv1.Origin_ORIGIN_TOOL, "", ToolTimeLimit())
	if d.Attributes["time_limit"] != "tool" || d.Attributes[AttrTimeout] != "true" {
		t.Fatalf("attributes %v", d.Attributes)
	}
	d = Describe(errors.New("over budget"), errorclassv1.Origin_ORIGIN_INTERCEPTOR, "", Veto(VetoBudget))
	if d.Attributes["veto"] != "budget" {
		t.Fatalf("attributes %v", d.Attributes)
	}
	d = Describe(errors.New("bad yaml"), errorclassv1.Origin_ORIGIN_RUNTIME, "", DefinitionStage(StageParse))
	if d.Attributes["stage"] != "parse" {
		t.Fatalf("attributes %v", d.Attributes)
	}
	d = Describe(errors.New("orphaned"), errorclassv1.Origin_ORIGIN_RECONCILER, "", ProviderCalls(0))
	if d.Attributes["provider_calls"] != "0" {
		t.Fatalf("attributes %v", d.Attributes)
	}
	// golang.org/x/sync/semaphore's TryAcquire says false, and the runtime makes its own error.
	d = Describe(errors.New("concurrency cap reached"), errorclassv1.Origin_ORIGIN_RUNTIME, "", RefusedBy(RefusedByConcurrencyLimit))
	if d.Attributes["refused_by"] != "concurrency_limit" {
		t.Fatalf("attributes %v", d.Attributes)
	}
	if config := newDescribeConfig([]DescribeOption{RefusedBy("tripwire")}); config.err == nil || config.err.(*FactError).Fact != "refused_by" {
		t.Fatalf("a guard the contract does not know: %v", config.err)
	}
	d = Describe(errors.New("slow"), errorclassv1.Origin_ORIGIN_RUNTIME, "", RunTimeLimit(), Attribute("run_id", "r-1"))
	if d.Attributes["time_limit"] != "run" || d.Attributes["run_id"] != "r-1" {
		t.Fatalf("attributes %v", d.Attributes)
	}
}
