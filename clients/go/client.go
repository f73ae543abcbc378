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
	"google.golang.org/grpc/backoff"
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

	source     *bundleSource // nil: no bundle
	localFirst bool
	reporter   *reporter // with a bundle: local-first decisions and fallback answers
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

// reconnect is how the channel reconnects to a service that went away: grpc-go's backoff
// with its growth capped at maxReconnect rather than 120 s, so that the breaker's probe
// finds a restarted service within seconds (a failing call costs nothing to the run: the
// breaker, or the bundle, answers it).
var reconnect = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: time.Second, Multiplier: 1.6, Jitter: 0.2, MaxDelay: maxReconnect},
	MinConnectTimeout: 20 * time.Second,
}

const maxReconnect = 5 * time.Second

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
		reportBatch: DefaultReportBatch, reportInterval: DefaultReportInterval, reportQueue: DefaultReportQueue,
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
		grpc.WithConnectParams(reconnect),
	}, c.dial...)
	conn, err := grpc.NewClient(target, dial...)
	if err != nil {
		return nil, fmt.Errorf("errorclass: client of %s: %w", target, err)
	}
	client := &Client{target: target, conn: conn, stub: errorclassv1.NewErrorClassifierClient(conn), timeout: c.timeout}
	if c.bundled() {
		if client.source, err = newBundleSource(&c, client.stub); err != nil {
			_ = conn.Close()
			return nil, err
		}
		if client.source.fetch {
			client.source.background()
		}
		// Local-first decisions and the bundle's answers while the service could not
		// answer are both reported (docs/bundles.md): the decision log sees every failure.
		client.localFirst = c.localFirst
		client.reporter = newReporter(&c, client.stub, client.source, c.timeout)
	}
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

// Close reports the decisions still pending (local-first and fallback answers) (within the client's deadline),
// stops the breaker's probe and a bundle fetch in flight, and closes the channel. Its
// error is a report that failed (those decisions are lost) or the channel's.
func (c *Client) Close() error {
	var reported error
	if c.reporter != nil {
		timeout := c.timeout
		if timeout <= 0 {
			timeout = DefaultTimeout // a Close never waits on a service that hangs
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		reported = c.reporter.close(ctx)
		cancel()
	}
	c.source.close()
	if c.breaker != nil {
		c.breaker.close()
	}
	return errors.Join(reported, c.conn.Close())
}

// deadline is ctx with the per-call deadline.
func (c *Client) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout > 0 {
		return context.WithTimeout(ctx, c.timeout)
	}
	return context.WithCancel(ctx)
}

// Bundle is the bundle in use (nil: none yet, or the client keeps none).
func (c *Client) Bundle() *Bundle { return c.source.bundle() }

// LoadBundle swaps in a bundle file (signaturesPath "" is the file beside it) once it
// verifies with the trusted keys. A refusal is the error, a *BundleError with its
// stable code, counted in BundleStatus; the bundle in use stays in use.
func (c *Client) LoadBundle(bundlePath, signaturesPath string) (*Bundle, error) {
	if c.source == nil {
		return nil, errors.New("errorclass: LoadBundle: the client keeps no bundle (give it a bundle option)")
	}
	return c.source.load(bundlePath, signaturesPath)
}

// RefreshBundle asks the service for its bundle now (GetBundle with if_none_match, the
// digest in use: an unchanged bundle costs no bytes) and swaps it in once it verifies:
// whether the bundle in use changed. A refused bundle is the error (*BundleError,
// counted) and the one in use stays. The client also refreshes on its own, in the
// background: at start, and when the service names a ruleset or bundle other than the
// one in use.
func (c *Client) RefreshBundle(ctx context.Context) (bool, error) {
	if c.source == nil {
		return false, errors.New("errorclass: RefreshBundle: the client keeps no bundle (give it a bundle option)")
	}
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	return c.source.refresh(ctx)
}

// Flush reports the decisions pending now (local-first and fallback answers) (within ctx and the client's
// deadline): how many the service took. A failed report stays pending, for the next.
func (c *Client) Flush(ctx context.Context) (int, error) {
	if c.reporter == nil {
		return 0, nil
	}
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	return c.reporter.flush(ctx)
}

// BundleStatus is the bundle in use, the refusals and the local-first reports.
func (c *Client) BundleStatus() BundleStatus {
	var out BundleStatus
	if c.source == nil {
		return out
	}
	if b := c.source.bundle(); b != nil {
		out.BundleDigest = b.BundleDigest
	}
	out.Refusals = c.source.refusals.Load()
	c.source.mu.Lock()
	out.LastRefusal = c.source.lastRefusal
	c.source.mu.Unlock()
	if c.reporter != nil {
		out.Pending, out.Reported, out.Dropped = c.reporter.pending(), c.reporter.reported.Load(), c.reporter.dropped.Load()
	}
	return out
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
// send it); everything else is the service's to check. With a bundle, the bundle
// answers (Local) when the service cannot, and in local-first mode before it is asked.
func (c *Client) ClassifyDescriptor(ctx context.Context, d *errorclassv1.ExceptionDescriptor) (*Answer, error) {
	if b := c.source.bundle(); b != nil && c.localFirst {
		answer, err := b.Classify(d)
		if err != nil {
			return nil, err
		}
		c.reporter.add(d, answer, time.Now())
		return answer, nil
	}
	answer, err := c.remote(ctx, d)
	if err == nil {
		c.source.stale(answer.RulesetDigest, "")
		return answer, nil
	}
	return c.fallback(err, d)
}

// fallback is the bundle's answer when the service could not answer (never for a
// descriptor the service refused); without a bundle, the service's error.
func (c *Client) fallback(err error, d *errorclassv1.ExceptionDescriptor) (*Answer, error) {
	var unclassified *Unclassified
	b := c.source.bundle()
	if b == nil || !errors.As(err, &unclassified) {
		return nil, err
	}
	answer, refused := b.Classify(d)
	if refused != nil {
		return nil, err
	}
	c.reporter.add(d, answer, time.Now())
	return answer, nil
}

func (c *Client) remote(ctx context.Context, d *errorclassv1.ExceptionDescriptor) (*Answer, error) {
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
// MaxBatch in one call), in order. It always asks the service (its answers are what a
// kept descriptor waits for): a bundle never answers it.
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
