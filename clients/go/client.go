package errorclass

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// Client is a channel to one classifier server, safe for concurrent use. Close it
// when done.
type Client struct {
	target  string
	conn    *grpc.ClientConn
	stub    errorclassv1.ErrorClassifierClient
	timeout time.Duration
	breaker *breaker
}

// ErrBreakerOpen is the cause (errors.Is) of an *Unclassified the circuit breaker
// answered without calling the service: it kept failing, and a probe in the background
// asks it again.
var ErrBreakerOpen = errors.New("errorclass: circuit open: the service kept failing; not called")

// serviceConfig is the service config of facts.json (serviceConfigJSON) with attempts
// tries per call; 1 leaves the retry policy out and keeps the throttling.
func serviceConfig(attempts int) (string, error) {
	if attempts == DefaultAttempts {
		return serviceConfigJSON, nil
	}
	var config map[string]any
	if err := json.Unmarshal([]byte(serviceConfigJSON), &config); err != nil {
		return "", err
	}
	for _, method := range config["methodConfig"].([]any) {
		method := method.(map[string]any)
		if attempts > 1 {
			method["retryPolicy"].(map[string]any)["maxAttempts"] = attempts
		} else {
			delete(method, "retryPolicy")
		}
	}
	data, err := json.Marshal(config)
	return string(data), err
}

// NewClient makes a client of the classifier server at target (host:port, or any
// grpc-go target such as dns:///classifier:50051). The connection is made lazily, as
// grpc.NewClient makes it: NewClient fails only on a bad target or option, never
// because the server is down. Each call has a deadline (DefaultTimeout), UNAVAILABLE is
// retried (DefaultAttempts tries, throttled by the channel: no retry storm), and a
// circuit breaker stops calling a service that keeps failing. When the service cannot
// answer, the call's error is an *Unclassified that keeps the descriptors.
func NewClient(target string, opts ...ClientOption) (*Client, error) {
	c := clientConfig{
		timeout: DefaultTimeout, attempts: DefaultAttempts, creds: insecure.NewCredentials(),
		breaker: true, failures: DefaultBreakerFailures, reset: DefaultBreakerReset, maxReset: MaxBreakerReset,
	}
	for _, opt := range opts {
		if opt != nil {
			opt.applyClient(&c)
		}
	}
	config, err := serviceConfig(c.attempts)
	if err != nil {
		return nil, fmt.Errorf("errorclass: service config: %w", err)
	}
	dial := append([]grpc.DialOption{
		grpc.WithTransportCredentials(c.creds),
		grpc.WithDefaultServiceConfig(config),
	}, c.dial...)
	conn, err := grpc.NewClient(target, dial...)
	if err != nil {
		return nil, fmt.Errorf("errorclass: client of %s: %w", target, err)
	}
	client := &Client{target: target, conn: conn, stub: errorclassv1.NewErrorClassifierClient(conn), timeout: c.timeout}
	if c.breaker {
		client.breaker = newBreaker(client.probe, c.failures, c.reset, c.maxReset)
	}
	return client, nil
}

// Dial is NewClient's former name, kept for the callers that use it.
//
// Deprecated: use NewClient (as grpc-go deprecated grpc.Dial for grpc.NewClient). Dial
// behaves exactly as NewClient and stays throughout v0.
func Dial(target string, opts ...DialOption) (*Client, error) { return NewClient(target, opts...) }

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
// is a *DescriptorError naming each field; a runtime fact the contract refuses (an
// option's value) is a *FactError, and nothing is sent.
func (c *Client) Classify(ctx context.Context, err error, origin errorclassv1.Origin, provider string, opts ...DescribeOption) (*Answer, error) {
	config := newDescribeConfig(opts)
	if config.err != nil {
		return nil, config.err
	}
	d := describe(err, origin, provider, config)
	if d == nil {
		return nil, errors.New("errorclass: Classify of a nil error")
	}
	return c.ClassifyDescriptor(ctx, d)
}

// ClassifyDescriptor classifies a descriptor (a builder's, or one kept from an outage).
// Text that is not UTF-8 is sent with each bad byte as U+FFFD (protobuf would refuse to
// send it); everything else is the service's to check.
func (c *Client) ClassifyDescriptor(ctx context.Context, d *errorclassv1.ExceptionDescriptor) (*Answer, error) {
	var answer *errorclassv1.ClassifyResponse
	err := c.call(ctx, func(ctx context.Context) error {
		var err error
		answer, err = c.stub.Classify(ctx, &errorclassv1.ClassifyRequest{Descriptor_: utf8Descriptor(d)})
		return err
	})
	if err != nil {
		return nil, c.failure(err, []*errorclassv1.ExceptionDescriptor{d})
	}
	return served(answer)[0], nil
}

// ClassifyBatch classifies descriptors kept while the service could not answer (at most
// MaxBatch in one call), in order.
func (c *Client) ClassifyBatch(ctx context.Context, ds []*errorclassv1.ExceptionDescriptor) ([]*Answer, error) {
	request := &errorclassv1.ClassifyBatchRequest{}
	for _, d := range ds {
		request.Requests = append(request.Requests, &errorclassv1.ClassifyRequest{Descriptor_: utf8Descriptor(d)})
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
	return served(answer.Responses...), nil
}

// call runs send through the breaker with the per-call deadline.
func (c *Client) call(ctx context.Context, send func(context.Context) error) error {
	if c.breaker != nil && !c.breaker.allow() {
		return ErrBreakerOpen
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	err := send(ctx)
	if c.breaker != nil {
		c.breaker.result(status.Code(err))
	}
	return err
}

func (c *Client) failure(err error, ds []*errorclassv1.ExceptionDescriptor) error {
	if errors.Is(err, ErrBreakerOpen) {
		message := fmt.Sprintf("circuit open: %s kept failing; not called (a probe asks it again)", c.target)
		return &Unclassified{Descriptors: ds, Code: codes.Unavailable, Message: message, Err: err}
	}
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
// breaker open: then errors.Is(err, ErrBreakerOpen)). It is not Unknown: Unknown means
// no rule matched. Keep Descriptors, in the order sent, and classify them later
// (ClassifyBatch); never store Unknown (0) for an outage.
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
