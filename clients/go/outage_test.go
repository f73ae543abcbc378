package errorclass

// The outage vectors (clients/spec/vectors/outage.json), run against what each names: a
// loopback port nothing listens on, or a real grpc-go server on 127.0.0.1 that answers
// every call UNAVAILABLE and counts the attempts it sees.

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// unavailable answers every call UNAVAILABLE, counting the attempts it sees.
type unavailable struct {
	errorclassv1.UnimplementedErrorClassifierServer
	attempts atomic.Int64
}

func (s *unavailable) Classify(context.Context, *errorclassv1.ClassifyRequest) (*errorclassv1.ClassifyResponse, error) {
	s.attempts.Add(1)
	return nil, status.Error(codes.Unavailable, "overloaded")
}

func (s *unavailable) ClassifyBatch(context.Context, *errorclassv1.ClassifyBatchRequest) (*errorclassv1.ClassifyBatchResponse, error) {
	s.attempts.Add(1)
	return nil, status.Error(codes.Unavailable, "overloaded")
}

// serve runs impl on a real grpc-go server on a loopback port, stopped at the test's end.
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

// closedPort is a loopback address nothing listens on (bound, then closed).
func closedPort(t *testing.T) string {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := listener.Addr().String()
	if err := listener.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func wantNumber(t *testing.T, v any) int64 {
	t.Helper()
	if v == nil {
		return 0
	}
	n, err := v.(json.Number).Int64()
	if err != nil {
		t.Fatalf("not a whole number: %v", v)
	}
	return n
}

// outageVector runs one outage vector and checks its want itself (bounds, not values):
// every outcome an *Unclassified keeping the descriptors in order, each call back
// within within_ms plus slack_ms, the breaker open after breaker_open_after calls (the
// later ones answered by it, never reaching grpc-go), the attempts the server saw
// within attempts_at_least and attempts_at_most.
func outageVector(t *testing.T, v vector) map[string]any {
	in, want := v.Input, v.Want
	var descriptors []*errorclassv1.ExceptionDescriptor
	for _, d := range in["descriptors"].([]any) {
		descriptors = append(descriptors, descriptorFromVector(t, d))
	}
	server := &unavailable{}
	var target string
	switch in["server"] {
	case "stopped":
		target = closedPort(t)
	case "unavailable":
		target = serve(t, server)
	default:
		t.Fatalf("field input.server: %v is neither stopped nor unavailable", in["server"])
	}
	var sent atomic.Int64 // calls that reached grpc-go, past the breaker
	count := grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		sent.Add(1)
		return invoker(ctx, method, req, reply, cc, opts...)
	})
	opts := []ClientOption{WithGRPCOptions(count)}
	if on, _ := in["breaker"].(bool); !on {
		opts = append(opts, WithoutBreaker())
	}
	if warm, _ := in["warm_up"].(bool); warm {
		other, err := NewClient(target, WithoutBreaker())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = other.ClassifyDescriptor(context.Background(), descriptors[0])
		_ = other.Close()
	}
	client, err := NewClient(target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	bound := time.Duration(wantNumber(t, want["within_ms"])+wantNumber(t, want["slack_ms"])) * time.Millisecond
	openAfter := wantNumber(t, want["breaker_open_after"])
	var times []time.Duration
	for call := range wantNumber(t, in["calls"]) {
		start := time.Now()
		sentBefore := sent.Load()
		switch in["call"] {
		case "classify":
			_, err = client.ClassifyDescriptor(context.Background(), descriptors[0])
		case "classify_batch":
			_, err = client.ClassifyBatch(context.Background(), descriptors)
		default:
			t.Fatalf("field input.call: %v is neither classify nor classify_batch", in["call"])
		}
		took := time.Since(start)
		times = append(times, took)
		var unclassified *Unclassified
		if want["outcome"] != "unclassified" || !errors.As(err, &unclassified) {
			t.Fatalf("call %d: field outcome: got %v, want %v", call+1, err, want["outcome"])
		}
		if keep, _ := want["keeps_descriptors"].(bool); keep {
			if len(unclassified.Descriptors) != len(descriptors) {
				t.Errorf("call %d: field keeps_descriptors: %d descriptors kept of %d", call+1, len(unclassified.Descriptors), len(descriptors))
			}
			for i := range min(len(unclassified.Descriptors), len(descriptors)) {
				if !proto.Equal(unclassified.Descriptors[i], descriptors[i]) {
					t.Errorf("call %d: field keeps_descriptors: descriptor %d is %v", call+1, i, unclassified.Descriptors[i])
				}
			}
		}
		if bound > 0 && took > bound {
			t.Errorf("call %d: field within_ms: took %v, over %v", call+1, took, bound)
		}
		if openAfter > 0 {
			shorted := errors.Is(err, ErrBreakerOpen)
			if shorted != (call >= openAfter) {
				t.Errorf("call %d: field breaker_open_after: short-circuited %v, want the breaker open after %d calls", call+1, shorted, openAfter)
			}
			if shorted && sent.Load() != sentBefore {
				t.Errorf("call %d: field breaker_open_after: a short-circuited call reached the network", call+1)
			}
		}
	}
	attempts := server.attempts.Load()
	if least, given := want["attempts_at_least"]; given && attempts < wantNumber(t, least) {
		t.Errorf("field attempts_at_least: the server saw %d attempts, want at least %d", attempts, wantNumber(t, least))
	}
	if most, given := want["attempts_at_most"]; given && attempts > wantNumber(t, most) {
		t.Errorf("field attempts_at_most: the server saw %d attempts, want at most %d (retries not throttled)", attempts, wantNumber(t, most))
	}
	t.Logf("outage %s: call times %v, attempts the server saw %d", v.Name, times, attempts)
	return nil
}

// hanging never answers a Classify: each call runs into its deadline.
type hanging struct {
	errorclassv1.UnimplementedErrorClassifierServer
}

func (hanging) Classify(ctx context.Context, _ *errorclassv1.ClassifyRequest) (*errorclassv1.ClassifyResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestAServiceThatHangsCostsOneDeadlineThenTheBundleAnswersAtOnce(t *testing.T) {
	library := filepath.Join(specDir(), "bundles", "library.json")
	deadline := 200 * time.Millisecond
	client := newClient(t, serve(t, hanging{}), WithUnsignedBundles(), WithBundleFile(library, ""),
		WithBundleFetch(false), WithTimeout(deadline))
	d := &errorclassv1.ExceptionDescriptor{Type: "openai.RateLimitError", HttpStatus: proto.Int32(429),
		Attributes: map[string]string{HeaderAttributePrefix + "retry-after": "7"}}
	want, err := specBundle(t, "library").Classify(d)
	if err != nil {
		t.Fatal(err)
	}
	for i, bound := range []time.Duration{deadline + 100*time.Millisecond, 20 * time.Millisecond} {
		started := time.Now()
		answer, err := client.ClassifyDescriptor(context.Background(), d)
		took := time.Since(started)
		if err != nil || !answer.Local || !proto.Equal(answer.ClassifyResponse, want.ClassifyResponse) {
			t.Fatalf("call %d: %v, %v; want the bundle's %v", i, answer, err, want.ClassifyResponse)
		}
		if took > bound {
			t.Fatalf("call %d took %s, want at most %s (the first runs into the deadline, then the breaker is open)", i, took, bound)
		}
	}
	if wait, ok := want.RetryAfter(); !ok || wait != 7*time.Second {
		t.Fatalf("the answer's wait: %v %v", wait, ok)
	}
}
