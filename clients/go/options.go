package errorclass

import (
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// Options come in two kinds, as grpc-go's DialOption and CallOption do: a ClientOption
// configures the client NewClient makes (deadline, retries, breaker, TLS, its bundle), a
// DescribeOption adds what only the runtime knows to one descriptor. Each is an
// interface with an unexported method, so the two cannot be mixed up and only this
// package makes them.

// ClientOption configures NewClient.
type ClientOption interface {
	applyClient(*clientConfig)
}

// DialOption is ClientOption's former name.
//
// Deprecated: use ClientOption (Dial is NewClient's former name).
type DialOption = ClientOption

type clientConfig struct {
	timeout  time.Duration
	attempts int
	creds    credentials.TransportCredentials
	breaker  bool
	failures int
	reset    time.Duration
	maxReset time.Duration
	dial     []grpc.DialOption

	// the bundle (source.go) and local-first reporting (report.go)
	bundleFile     string
	signaturesFile string
	keys           [][]byte
	keyFiles       []string
	allowUnsigned  bool
	fetch          *bool
	localFirst     bool
	reportBatch    int
	reportInterval time.Duration
	reportQueue    int
}

// bundled is whether the client keeps a bundle: one was given (a file, trusted keys, or
// unsigned allowed), or local-first asks for one.
func (c *clientConfig) bundled() bool {
	return c.bundleFile != "" || len(c.keys) > 0 || len(c.keyFiles) > 0 || c.allowUnsigned || c.localFirst ||
		(c.fetch != nil && *c.fetch)
}

// fetchBundle is whether the bundle is fetched from the service: WithBundleFetch, else
// whenever the client keeps a bundle.
func (c *clientConfig) fetchBundle() bool {
	if c.fetch != nil {
		return *c.fetch
	}
	return c.bundled()
}

type clientOption func(*clientConfig)

func (f clientOption) applyClient(c *clientConfig) { f(c) }

// WithTimeout sets the per-call deadline (DefaultTimeout, 250 ms, unless set; a shorter
// deadline on the call's context wins; 0 leaves the context's alone).
func WithTimeout(d time.Duration) ClientOption {
	return clientOption(func(c *clientConfig) { c.timeout = d })
}

// WithAttempts sets the tries per call while the server answers UNAVAILABLE
// (DefaultAttempts unless set; 1 turns retries off). Nothing else is retried, and the
// channel's retry throttling stops retrying while most calls fail.
func WithAttempts(n int) ClientOption {
	return clientOption(func(c *clientConfig) { c.attempts = max(n, 1) })
}

// WithTransportCredentials sets TLS (the default is a plaintext channel).
func WithTransportCredentials(creds credentials.TransportCredentials) ClientOption {
	return clientOption(func(c *clientConfig) { c.creds = creds })
}

// WithBreaker sets when the circuit breaker opens (that many consecutive service
// failures) and how long it waits before its first probe (doubling up to
// MaxBreakerReset, or reset when larger). The breaker is on by default, with
// DefaultBreakerFailures and DefaultBreakerReset.
func WithBreaker(failures int, reset time.Duration) ClientOption {
	return clientOption(func(c *clientConfig) { c.breaker, c.failures, c.reset = true, max(failures, 1), reset })
}

// WithoutBreaker turns the circuit breaker off: every call goes to the network.
func WithoutBreaker() ClientOption {
	return clientOption(func(c *clientConfig) { c.breaker = false })
}

// WithGRPCOptions adds grpc-go dial options (interceptors, a custom dialer, keepalive).
// The service config is the client's own: a grpc.WithDefaultServiceConfig here replaces
// its retries and their throttling.
func WithGRPCOptions(opts ...grpc.DialOption) ClientOption {
	return clientOption(func(c *clientConfig) { c.dial = append(c.dial, opts...) })
}

// WithBundleFile starts the client from a bundle file shipped with the runtime
// (`classifier bundle build`), verified against its signatures file (signaturesPath; ""
// is the file beside it, bundlePath.sig.json) with the trusted keys (WithBundleKeys,
// WithBundleKeyFiles). A bundle that does not verify is NewClient's error, a
// *BundleError with its stable code. The client answers from it when the service cannot
// (marked Local), and in local-first mode (WithLocalFirst) before it asks the service at
// all.
func WithBundleFile(bundlePath, signaturesPath string) ClientOption {
	return clientOption(func(c *clientConfig) { c.bundleFile, c.signaturesFile = bundlePath, signaturesPath })
}

// WithBundleKeys trusts these Ed25519 public keys (PEM, SubjectPublicKeyInfo, as
// `classifier bundle keygen` writes them): a bundle, from a file or from the service, is
// used only when one of them signed its exact bytes; an unsigned, unknown-key or tampered
// one is refused (BundleStatus counts refusals) and the bundle in use stays in use. Give
// the old and the new key while keys rotate.
func WithBundleKeys(pems ...[]byte) ClientOption {
	return clientOption(func(c *clientConfig) { c.keys = append(c.keys, pems...) })
}

// WithBundleKeyFiles is WithBundleKeys reading the PEM files (read once, by NewClient).
func WithBundleKeyFiles(paths ...string) ClientOption {
	return clientOption(func(c *clientConfig) { c.keyFiles = append(c.keyFiles, paths...) })
}

// WithUnsignedBundles lets the client use bundles without trusted keys, unverified (a
// development setup, or a server run with --unsigned-bundle). Without it and without
// keys, NewClient refuses a bundle option. With keys, bundles are verified all the same.
func WithUnsignedBundles() ClientOption {
	return clientOption(func(c *clientConfig) { c.allowUnsigned = true })
}

// WithBundleFetch sets whether the client fetches the service's bundle (GetBundle) at
// start, in the background, and again whenever the service names a ruleset or bundle
// other than the one in use. It is on whenever the client keeps a bundle (a bundle
// option or local-first); WithBundleFetch(false) keeps the start file alone.
func WithBundleFetch(on bool) ClientOption {
	return clientOption(func(c *clientConfig) { c.fetch = &on })
}

// WithLocalFirst classifies in process once a bundle is loaded (no call per failure)
// and reports the decisions to the service in batches (ReportDecisions), so its
// decision log, metrics and Unknown inbox still see them. Until a bundle is loaded it
// asks the service. Close flushes what is pending.
func WithLocalFirst() ClientOption {
	return clientOption(func(c *clientConfig) { c.localFirst = true })
}

// WithReports sets local-first reporting: a report when batch decisions are pending
// (DefaultReportBatch) or interval has passed (DefaultReportInterval), at most queue
// decisions waiting (DefaultReportQueue; the oldest are dropped past it). Zero keeps a
// default.
func WithReports(batch int, interval time.Duration, queue int) ClientOption {
	return clientOption(func(c *clientConfig) {
		if batch > 0 {
			c.reportBatch = batch
		}
		if interval > 0 {
			c.reportInterval = interval
		}
		if queue > 0 {
			c.reportQueue = queue
		}
	})
}

// DescribeOption adds what only the runtime knows to a descriptor that Describe,
// DescribeResponse, DescribeFinishReason, DescribeBlockedPrompt or DescribeResponseJSON
// builds (or Client.Classify describes): the runtime contract's facts (ToolTimeLimit,
// RunTimeLimit, Veto, DefinitionStage, RefusedBy, ProviderCalls) and other attributes
// (Attribute).
// A fact the contract refuses is left out of the descriptor and is the error of
// Client.Classify (a *FactError); RuntimeAttributes checks values ahead of time.
type DescribeOption interface {
	applyDescribe(*describeConfig)
}

// Option is DescribeOption's former name.
//
// Deprecated: use DescribeOption.
type Option = DescribeOption

type describeConfig struct {
	keys       []string // in the order set, so the last setting of a key wins
	attributes map[string]string
	err        error // the first refused fact
}

type describeOption func(*describeConfig)

func (f describeOption) applyDescribe(c *describeConfig) { f(c) }

func newDescribeConfig(opts []DescribeOption) *describeConfig {
	c := &describeConfig{attributes: map[string]string{}}
	for _, opt := range opts {
		if opt != nil {
			opt.applyDescribe(c)
		}
	}
	return c
}

func (c *describeConfig) set(key, value string) {
	if _, ok := c.attributes[key]; !ok {
		c.keys = append(c.keys, key)
	}
	c.attributes[key] = value
}

// apply puts the options' attributes on attributes (over what the error said).
func (c *describeConfig) apply(attributes map[string]string) map[string]string {
	if len(c.keys) == 0 {
		return attributes
	}
	if attributes == nil {
		attributes = map[string]string{}
	}
	for _, key := range c.keys {
		attributes[key] = c.attributes[key]
	}
	return attributes
}

// fact sets a runtime fact checked against the contract (the refused value is left out).
func fact(name string, value any) DescribeOption {
	return describeOption(func(c *describeConfig) {
		f, _ := factNamed(name)
		attribute, err := f.attribute(value)
		if err != nil {
			if c.err == nil {
				c.err = err
			}
			return
		}
		c.set(name, attribute)
	})
}

// ToolTimeLimit says the tool wrapper's own time limit fired (origin tool): ToolTimeout.
func ToolTimeLimit() DescribeOption { return fact(factTimeLimit, TimeLimitTool) }

// RunTimeLimit says the run's (or a step's) deadline fired, whatever surfaced: Timeout.
func RunTimeLimit() DescribeOption { return fact(factTimeLimit, TimeLimitRun) }

// Veto says an interceptor declined the next step on purpose (origin interceptor):
// VetoBudget, VetoQuota or VetoPolicy, which the bundled rules know (the run pauses), or
// another word (lower case, digits, _ and -; at most 64), which is a veto with no claim.
func Veto(kind string) DescribeOption { return fact(factVeto, kind) }

// DefinitionStage says the runtime failed on the agent definition (origin runtime), at
// StageLoad, StageParse, StageCompile or StageValidate: CompilationFailed.
func DefinitionStage(stage string) DescribeOption { return fact(factStage, stage) }

// RefusedBy says the runtime's own guard refused the call before it was made, whatever
// the error's type (a plain errors.New, golang.org/x/time/rate's Wait error, a
// semaphore's): RefusedByBreaker (its circuit breaker for the provider is open:
// ProviderUnavailable), RefusedByRateLimiter, RefusedByConcurrencyLimit or RefusedByQuota
// (QuotaExceeded), RefusedByBudget (BudgetExceeded). Give the origin runtime. Another
// value is refused (a *FactError from Client.Classify).
func RefusedBy(guard string) DescribeOption { return fact(factRefusedBy, guard) }

// ProviderCalls is how many provider calls the run had answered when reconciliation
// found it gone (origin reconciler); 0 is Infrastructure.
func ProviderCalls(n int) DescribeOption { return fact(factProviderCalls, n) }

// Attribute sets another attribute the runtime knows. A key of the runtime contract
// (time_limit, veto, stage, refused_by, provider_calls) is checked as its option checks it; any
// other is sent as given, within the limits (Fit).
func Attribute(key, value string) DescribeOption {
	if _, contract := factNamed(key); contract {
		return fact(key, value)
	}
	return describeOption(func(c *describeConfig) { c.set(key, value) })
}
