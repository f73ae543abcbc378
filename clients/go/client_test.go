package errorclass

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// refusing is a server that refuses every descriptor as the classifier refuses a bad
// one: INVALID_ARGUMENT with a BadRequest naming the field.
type refusing struct {
	errorclassv1.UnimplementedErrorClassifierServer
	calls int
}

func (s *refusing) Classify(context.Context, *errorclassv1.ClassifyRequest) (*errorclassv1.ClassifyResponse, error) {
	s.calls++
	st, _ := status.New(codes.InvalidArgument, "descriptor.type: must not be empty").WithDetails(&errdetails.BadRequest{
		FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "descriptor.type", Description: "must not be empty"}},
	})
	return nil, st.Err()
}

func serve(t *testing.T, impl errorclassv1.ErrorClassifierServer) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer()
	errorclassv1.RegisterErrorClassifierServer(server, impl)
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(server.Stop)
	return listener.Addr().String()
}

func closedPort(t *testing.T) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := listener.Addr().String()
	listener.Close()
	return addr
}

func TestInvalidArgumentSurfacesTheFieldViolations(t *testing.T) {
	impl := &refusing{}
	client, err := Dial(serve(t, impl), WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	_, err = client.ClassifyDescriptor(context.Background(), &errorclassv1.ExceptionDescriptor{})
	var bad *DescriptorError
	if !errors.As(err, &bad) || len(bad.Violations) != 1 || bad.Violations[0].Field != "descriptor.type" {
		t.Fatalf("got %v", err)
	}
	if impl.calls != 1 {
		t.Fatalf("INVALID_ARGUMENT was sent %d times: it is never retried", impl.calls)
	}
}

func TestADeadServiceIsUnclassifiedAndTheBreakerStopsCalling(t *testing.T) {
	client, err := Dial(closedPort(t), WithTimeout(time.Second), WithBreaker(3, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	failure := errors.New("provider exploded")
	for i := range 3 {
		_, err = client.Classify(context.Background(), failure, errorclassv1.Origin_ORIGIN_PROVIDER, "openai")
		var unclassified *Unclassified
		if !errors.As(err, &unclassified) || unclassified.Code != codes.Unavailable {
			t.Fatalf("call %d: %v", i, err)
		}
		if d := unclassified.Descriptor(); d == nil || d.Message != "provider exploded" {
			t.Fatalf("call %d lost the descriptor: %v", i, d)
		}
	}
	start := time.Now()
	_, err = client.Classify(context.Background(), failure, errorclassv1.Origin_ORIGIN_PROVIDER, "openai")
	var unclassified *Unclassified
	if !errors.As(err, &unclassified) || time.Since(start) > 50*time.Millisecond {
		t.Fatalf("the open breaker should answer at once: %v after %v", err, time.Since(start))
	}
	if client.breaker.opened != 1 {
		t.Fatalf("opened %d times", client.breaker.opened)
	}
}

func TestTheRuntimeContractAttributesComeFromOptions(t *testing.T) {
	d := Describe(context.DeadlineExceeded, errorclassv1.Origin_ORIGIN_TOOL, "", ToolTimeLimit())
	if d.Attributes["time_limit"] != "tool" || d.Attributes[AttrTimeout] != "true" {
		t.Fatalf("attributes %v", d.Attributes)
	}
	d = Describe(errors.New("over budget"), errorclassv1.Origin_ORIGIN_INTERCEPTOR, "", Veto("budget"))
	if d.Attributes["veto"] != "budget" {
		t.Fatalf("attributes %v", d.Attributes)
	}
	d = Describe(errors.New("bad yaml"), errorclassv1.Origin_ORIGIN_RUNTIME, "", DefinitionStage("parse"))
	if d.Attributes["stage"] != "parse" {
		t.Fatalf("attributes %v", d.Attributes)
	}
	d = Describe(errors.New("orphaned"), errorclassv1.Origin_ORIGIN_RECONCILER, "", ProviderCalls(0))
	if d.Attributes["provider_calls"] != "0" {
		t.Fatalf("attributes %v", d.Attributes)
	}
}
