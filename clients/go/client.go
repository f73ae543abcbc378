package errorclass

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// DefaultTimeout is how long a call may take unless the call's context says less: the
// Python client's default. A loopback or in-cluster call answers in about a millisecond;
// a quarter of a second is tens of times that, and a run's failure handling never waits
// long on a dead service.
const DefaultTimeout = 250 * time.Millisecond

// DefaultAttempts is the tries per call while the server is UNAVAILABLE (gRPC's retry
// policy, as the Python client's; 1 turns retries off). Nothing else is retried, and the
// channel's retry throttling stops retries while most calls fail: no retry storm.
const DefaultAttempts = 3

// Client is a channel to one classifier server. Close it when done.
type Client struct {
	target  string
	conn    *grpc.ClientConn
	stub    errorclassv1.ErrorClassifierClient
	timeout time.Duration
	breaker *breaker
}

type settings struct {
	timeout  time.Duration
	attempts int
	creds    credentials.TransportCredentials
	breaker  bool
	failures int
	reset    time.Duration
	maxReset time.Duration
	extra    []grpc.DialOption
}

// DialOption configures Dial.
type DialOption func(*settings)

// WithTimeout sets the per-call deadline (a shorter one on the call's context wins).
func WithTimeout(d time.Duration) DialOption { return func(s *settings) { s.timeout = d } }

// WithAttempts sets the tries per call while the server is UNAVAILABLE (1: no retry).
func WithAttempts(n int) DialOption { return func(s *settings) { s.attempts = max(n, 1) } }

// WithTransportCredentials sets TLS (the default is a plaintext channel).
func WithTransportCredentials(c credentials.TransportCredentials) DialOption {
	return func(s *settings) { s.creds = c }
}

// WithoutBreaker turns the circuit breaker off.
func WithoutBreaker() DialOption { return func(s *settings) { s.breaker = false } }

// WithBreaker sets when the breaker opens (consecutive failures) and when it first probes.
func WithBreaker(failures int, reset time.Duration) DialOption {
	return func(s *settings) { s.breaker, s.failures, s.reset = true, failures, reset }
}

// WithGRPCOptions adds grpc-go dial options.
func WithGRPCOptions(opts ...grpc.DialOption) DialOption {
	return func(s *settings) { s.extra = append(s.extra, opts...) }
}

// serviceConfig retries UNAVAILABLE briefly (as the Python client's service config),
// throttled: once about half the recent calls failed, the channel stops retrying.
func serviceConfig(attempts int) string {
	retry := ""
	if attempts > 1 {
		retry = fmt.Sprintf(`,"retryPolicy":{"maxAttempts":%d,"initialBackoff":"0.05s","maxBackoff":"1s",`+
			`"backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}`, attempts)
	}
	return `{"methodConfig":[{"name":[{"service":"errorclass.v1.ErrorClassifier"}]` + retry + `}],` +
		`"retryThrottling":{"maxTokens":10,"tokenRatio":0.1}}`
}

// Dial makes a client of the server at target (host:port). The connection is made
// lazily: Dial fails only on a bad target or option, never because the server is down.
func Dial(target string, opts ...DialOption) (*Client, error) {
	s := settings{
		timeout: DefaultTimeout, attempts: DefaultAttempts, creds: insecure.NewCredentials(),
		breaker: true, failures: DefaultBreakerFailures, reset: DefaultBreakerReset, maxReset: MaxBreakerReset,
	}
	for _, opt := range opts {
		opt(&s)
	}
	dial := append([]grpc.DialOption{
		grpc.WithTransportCredentials(s.creds),
		grpc.WithDefaultServiceConfig(serviceConfig(s.attempts)),
	}, s.extra...)
	conn, err := grpc.NewClient(target, dial...)
	if err != nil {
		return nil, fmt.Errorf("errorclass: dial %s: %w", target, err)
	}
	c := &Client{target: target, conn: conn, stub: errorclassv1.NewErrorClassifierClient(conn), timeout: s.timeout}
	if s.breaker {
		c.breaker = newBreaker(c.probe, s.failures, s.reset, max(s.maxReset, s.reset))
	}
	return c, nil
}

// Close stops the breaker's probe and closes the channel.
func (c *Client) Close() error {
	if c.breaker != nil {
		c.breaker.close()
	}
	return c.conn.Close()
}

// Stub is the generated client, for the calls this type does not wrap.
func (c *Client) Stub() errorclassv1.ErrorClassifierClient { return c.stub }

// Classify describes err (Describe) and classifies it. When the service cannot answer
// the error is an *Unclassified holding the descriptor; a descriptor the service refuses
// is a *DescriptorError naming each field.
func (c *Client) Classify(ctx context.Context, err error, origin errorclassv1.Origin, provider string, opts ...Option) (*errorclassv1.ClassifyResponse, error) {
	d := Describe(err, origin, provider, opts...)
	if d == nil {
		return nil, errors.New("errorclass: Classify of a nil error")
	}
	return c.ClassifyDescriptor(ctx, d)
}

// ClassifyDescriptor classifies a descriptor (Describe's, or one kept from an outage).
func (c *Client) ClassifyDescriptor(ctx context.Context, d *errorclassv1.ExceptionDescriptor) (*errorclassv1.ClassifyResponse, error) {
	var answer *errorclassv1.ClassifyResponse
	err := c.call(ctx, func(ctx context.Context) error {
		var err error
		answer, err = c.stub.Classify(ctx, &errorclassv1.ClassifyRequest{Descriptor_: d})
		return err
	})
	if err != nil {
		return nil, c.failure(err, []*errorclassv1.ExceptionDescriptor{d})
	}
	return answer, nil
}

// ClassifyBatch classifies descriptors kept while the service could not answer (at most
// MaxBatch in one call), in order.
func (c *Client) ClassifyBatch(ctx context.Context, ds []*errorclassv1.ExceptionDescriptor) ([]*errorclassv1.ClassifyResponse, error) {
	request := &errorclassv1.ClassifyBatchRequest{}
	for _, d := range ds {
		request.Requests = append(request.Requests, &errorclassv1.ClassifyRequest{Descriptor_: d})
	}
	var answer *errorclassv1.ClassifyBatchResponse
	err := c.call(ctx, func(ctx context.Context) error {
		var err error
		answer, err = c.stub.ClassifyBatch(ctx, request)
		return err
	})
	if err != nil {
		return nil, c.failure(err, ds)
	}
	return answer.Responses, nil
}

// call runs send through the breaker with the per-call deadline.
func (c *Client) call(ctx context.Context, send func(context.Context) error) error {
	if c.breaker != nil && !c.breaker.allow() {
		return status.Errorf(codes.Unavailable, "circuit open: %s kept failing; not called (probing in the background)", c.target)
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	err := send(ctx)
	if c.breaker != nil {
		if err == nil {
			c.breaker.succeeded()
		} else {
			c.breaker.failed(status.Code(err))
		}
	}
	return err
}

func (c *Client) failure(err error, ds []*errorclassv1.ExceptionDescriptor) error {
	st, _ := status.FromError(err)
	if st.Code() == codes.InvalidArgument {
		return descriptorError(st)
	}
	return &Unclassified{Descriptors: ds, Code: st.Code(), Message: st.Message(), Err: err}
}

func (c *Client) probe() bool {
	timeout := c.timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := c.stub.GetRuleset(ctx, &errorclassv1.GetRulesetRequest{})
	return err == nil
}

// Unclassified is the service not answering (down, overloaded, past the deadline, the
// breaker open). It is not Unknown: Unknown means no rule matched. Keep Descriptors and
// classify them later (ClassifyBatch); never store Unknown (0) for an outage.
type Unclassified struct {
	Descriptors []*errorclassv1.ExceptionDescriptor
	Code        codes.Code
	Message     string
	Err         error
}

func (u *Unclassified) Error() string {
	return fmt.Sprintf("errorclass: not classified (%s: %s); keep the descriptor and classify it later", u.Code, u.Message)
}

func (u *Unclassified) Unwrap() error { return u.Err }

// Descriptor is the descriptor of a Classify call that was not answered.
func (u *Unclassified) Descriptor() *errorclassv1.ExceptionDescriptor {
	if len(u.Descriptors) == 0 {
		return nil
	}
	return u.Descriptors[0]
}

// FieldViolation is one field the service refused, in its words.
type FieldViolation struct {
	Field       string
	Description string
}

// DescriptorError is INVALID_ARGUMENT: the descriptor is malformed; the service named
// each bad field (`descriptor.causes[0].type: must not be empty`).
type DescriptorError struct {
	Violations []FieldViolation
}

func (e *DescriptorError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = strings.TrimPrefix(v.Field+": "+v.Description, ": ")
	}
	return "errorclass: the service refused the descriptor: " + strings.Join(parts, "; ")
}

func descriptorError(st *status.Status) *DescriptorError {
	out := &DescriptorError{}
	for _, detail := range st.Details() {
		if bad, ok := detail.(*errdetails.BadRequest); ok {
			for _, v := range bad.GetFieldViolations() {
				out.Violations = append(out.Violations, FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
			}
		}
	}
	if len(out.Violations) == 0 {
		out.Violations = []FieldViolation{{Description: st.Message()}}
	}
	return out
}
