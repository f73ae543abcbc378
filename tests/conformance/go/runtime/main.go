// Command runtime is Go's side of the runtime suite (tests/conformance/runtime/README.md):
// each pair `go.<mechanism>::<situation-id>` raises a real failure with real Go code and
// describes it with errorclass.Describe, the contract's attributes set through the
// module's options (ToolTimeLimit, RunTimeLimit, Veto, RefusedBy, DefinitionStage,
// ProviderCalls) where the runtime knows them.
//
//	runtime --list   the pair ids, as a JSON array
//	runtime          one request per stdin line: {"pair", "env": {"tool_api", "closed_port",
//	                 "tmp"}, "contract": bool}; one answer per line: {"pair", "descriptor",
//	                 "chain", "error"}
//
// `contract: false` leaves the options out (what a runtime sent before the contract).
// Every wait is short and bounded; every address is 127.0.0.1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"text/template"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/sony/gobreaker/v2"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"

	errorclass "github.com/errorclass/classifier/clients/go"
	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
	"github.com/errorclass/classifier/tests/conformance/go/internal/worker"
)

const limit = 50 * time.Millisecond

type env struct {
	ToolAPI    string `json:"tool_api"`
	ClosedPort int    `json:"closed_port"`
	Tmp        string `json:"tmp"`
}

// failure is what a pair raised, where it was raised, and what the runtime knows of it.
type failure struct {
	err    error
	origin errorclassv1.Origin
	knows  []errorclass.DescribeOption
}

var pairs = map[string]func(env) failure{}

func pair(mechanism, situation string, fn func(env) failure) {
	pairs["go."+mechanism+"::"+situation] = fn
}

const (
	tool        = errorclassv1.Origin_ORIGIN_TOOL
	provider    = errorclassv1.Origin_ORIGIN_PROVIDER
	runtime     = errorclassv1.Origin_ORIGIN_RUNTIME
	user        = errorclassv1.Origin_ORIGIN_USER
	interceptor = errorclassv1.Origin_ORIGIN_INTERCEPTOR
	guard       = errorclassv1.Origin_ORIGIN_GUARD
	reconciler  = errorclassv1.Origin_ORIGIN_RECONCILER
)

func get(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

func slow(e env) string { return e.ToolAPI + "/slow/1000" }

// hanging is a provider API that answers only after 2 s (a run's deadline cuts the call).
func hanging(e env) string { return e.ToolAPI + "/slow/2000" }

func init() {
	// The tool wrapper's own limit: the wrapper's context.WithTimeout around the tool; the
	// wrapper knows it fired (its context's Err() is DeadlineExceeded).
	pair("context-with-timeout", "tool-timeout.wrapper-limit", func(e env) failure {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		err := get(ctx, http.DefaultClient, slow(e))
		return failure{err, tool, []errorclass.DescribeOption{errorclass.ToolTimeLimit()}}
	})
	pair("context-done-select", "tool-timeout.wrapper-limit", func(e env) failure {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- get(context.Background(), &http.Client{Timeout: 2 * time.Second}, slow(e)) }()
		var err error
		select {
		case err = <-done:
		case <-ctx.Done():
			err = fmt.Errorf("tool search: %w", ctx.Err())
		}
		return failure{err, tool, []errorclass.DescribeOption{errorclass.ToolTimeLimit()}}
	})
	// The tool's own client timed out; the wrapper's limit did not fire.
	pair("http-client-timeout", "tool-error.own-timeout", func(e env) failure {
		return failure{get(context.Background(), &http.Client{Timeout: limit}, slow(e)), tool, nil}
	})
	pair("tool-own-context-deadline", "tool-error.own-timeout", func(e env) failure {
		ctx, cancel := context.WithTimeout(context.Background(), limit) // the tool's own deadline
		defer cancel()
		return failure{fmt.Errorf("fetch page: %w", get(ctx, http.DefaultClient, slow(e))), tool, nil}
	})
	// The user cancelled the run's context while the provider call was in flight.
	pair("context-cancel", "cancel.user", func(e env) failure {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(limit, cancel)
		return failure{get(ctx, http.DefaultClient, slow(e)), user, nil}
	})
	// The run's deadline fired during a call; the runtime knows it set it.
	pair("context-with-timeout", "timeout.run-deadline", func(e env) failure {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		return failure{get(ctx, http.DefaultClient, slow(e)), runtime, []errorclass.DescribeOption{errorclass.RunTimeLimit()}}
	})
	pair("errgroup-with-context", "timeout.run-deadline", func(e env) failure {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		group, ctx := errgroup.WithContext(ctx)
		for range 2 {
			group.Go(func() error { return get(ctx, http.DefaultClient, slow(e)) })
		}
		return failure{group.Wait(), runtime, []errorclass.DescribeOption{errorclass.RunTimeLimit()}}
	})
	pair("http-client-timeout", "timeout.provider-call", func(e env) failure {
		return failure{get(context.Background(), &http.Client{Timeout: limit}, slow(e)), provider, nil}
	})
	// The run's deadline cancels a provider call in flight (a real SDK call to a provider
	// API on loopback that answers only after 2 s): the SDK returns what it returns on the
	// cancel, with the call's origin; the runtime knows its deadline fired.
	pair("openai-go-run-deadline", "timeout.run-deadline", func(e env) failure {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		client := openai.NewClient(option.WithBaseURL(hanging(e)+"/v1/"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
		_, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model:    openai.ChatModel("gpt-4o-mini"),
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		})
		return failure{err, provider, []errorclass.DescribeOption{errorclass.RunTimeLimit()}}
	})
	pair("anthropic-go-run-deadline", "timeout.run-deadline", func(e env) failure {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		client := anthropic.NewClient(anthropicoption.WithBaseURL(hanging(e)+"/"), anthropicoption.WithAPIKey("sk-ant-test"), anthropicoption.WithMaxRetries(0))
		_, err := client.Messages.New(ctx, anthropic.MessageNewParams{
			Model:     anthropic.Model("claude-sonnet-4-5"),
			MaxTokens: 10,
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
		})
		return failure{err, provider, []errorclass.DescribeOption{errorclass.RunTimeLimit()}}
	})
	pair("net-http-run-deadline", "timeout.run-deadline", func(e env) failure {
		// The run's context cancels the raw HTTP call to the provider while it waits.
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		return failure{get(ctx, http.DefaultClient, hanging(e)+"/v1/chat/completions"), provider, []errorclass.DescribeOption{errorclass.RunTimeLimit()}}
	})
	// Tools failing.
	pair("os-open", "tool-error.file", func(e env) failure {
		_, err := os.Open(filepath.Join(e.Tmp, "missing", "notes.md"))
		return failure{err, tool, nil}
	})
	pair("os-readfile-directory", "tool-error.file", func(e env) failure {
		_, err := os.ReadFile(e.Tmp)
		return failure{fmt.Errorf("tool read_file: %w", err), tool, nil}
	})
	pair("errgroup", "tool-error.file", func(e env) failure {
		var group errgroup.Group
		group.Go(func() error { return nil })
		group.Go(func() error {
			_, err := os.Stat(filepath.Join(e.Tmp, "missing.csv"))
			return fmt.Errorf("load table: %w", err)
		})
		return failure{group.Wait(), tool, nil}
	})
	pair("errors-join", "tool-error.file", func(e env) failure {
		_, first := os.Open(filepath.Join(e.Tmp, "a.txt"))
		_, second := os.Open(filepath.Join(e.Tmp, "b.txt"))
		return failure{errors.Join(first, second), tool, nil}
	})
	pair("encoding-json", "tool-error.parse", func(env) failure {
		var v map[string]any
		return failure{json.Unmarshal([]byte(`{"rows": [1, 2,`), &v), tool, nil}
	})
	pair("strconv", "tool-error.parse", func(env) failure {
		_, err := strconv.Atoi("12x")
		return failure{fmt.Errorf("parse quantity: %w", err), tool, nil}
	})
	pair("resolver-closed-port", "tool-error.dns", func(e env) failure {
		resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, fmt.Sprintf("127.0.0.1:%d", e.ClosedPort))
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := resolver.LookupHost(ctx, "search.example.invalid")
		return failure{err, tool, nil}
	})
	pair("net-dial", "tool-error.refused", func(e env) failure {
		_, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", e.ClosedPort), time.Second)
		return failure{err, tool, nil}
	})
	pair("net-http", "tool-error.refused", func(e env) failure {
		return failure{get(context.Background(), &http.Client{Timeout: time.Second}, fmt.Sprintf("http://127.0.0.1:%d/", e.ClosedPort)), tool, nil}
	})
	pair("os-exec", "tool-error.subprocess", func(env) failure {
		return failure{exec.Command("sh", "-c", "exit 3").Run(), tool, nil}
	})
	pair("net-http-status", "tool-error.http-status", func(e env) failure {
		resp, err := http.Get(e.ToolAPI + "/status/429")
		if err != nil {
			return failure{err, tool, nil}
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return failure{&statusError{resp: resp, body: body}, tool, nil}
	})
	// The runtime's own limiter and breaker.
	pair("x-time-rate", "quota.limiter", func(env) failure {
		limiter := rate.NewLimiter(rate.Every(time.Hour), 1)
		return failure{limiter.WaitN(context.Background(), 5), runtime, nil}
	})
	pair("gobreaker", "breaker.open", func(env) failure {
		breaker := gobreaker.NewCircuitBreaker[any](gobreaker.Settings{
			Name: "provider", ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 1 }, Timeout: time.Hour,
		})
		_, _ = breaker.Execute(func() (any, error) { return nil, errors.New("provider 503") })
		_, err := breaker.Execute(func() (any, error) { return nil, nil })
		return failure{err, provider, nil}
	})
	// The runtime's own guards described as such (origin runtime, RefusedBy): whatever the
	// error, a plain errors.New included.
	pair("gobreaker-own-guard", "breaker.open", func(env) failure {
		breaker := gobreaker.NewCircuitBreaker[any](gobreaker.Settings{
			Name: "provider", ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 1 }, Timeout: time.Hour,
		})
		_, _ = breaker.Execute(func() (any, error) { return nil, errors.New("provider 503") })
		_, err := breaker.Execute(func() (any, error) { return nil, nil })
		return failure{err, runtime, []errorclass.DescribeOption{errorclass.RefusedBy(errorclass.RefusedByBreaker)}}
	})
	// Half-open, its one probe in flight: gobreaker refuses the next call (ErrTooManyRequests).
	halfOpen := func(knows []errorclass.DescribeOption) func(env) failure {
		return func(env) failure {
			breaker := gobreaker.NewCircuitBreaker[any](gobreaker.Settings{
				Name: "provider", MaxRequests: 1, Timeout: limit,
				ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 1 },
			})
			_, _ = breaker.Execute(func() (any, error) { return nil, errors.New("provider 503") })
			time.Sleep(2 * limit) // open -> half-open
			probing, release := make(chan struct{}), make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = breaker.Execute(func() (any, error) { close(probing); <-release; return nil, nil })
			}()
			<-probing
			_, err := breaker.Execute(func() (any, error) { return nil, nil })
			close(release)
			<-done
			if breaker.State() != gobreaker.StateClosed || !errors.Is(err, gobreaker.ErrTooManyRequests) {
				return failure{fmt.Errorf("pair bug: not refused half-open: %v", err), runtime, knows}
			}
			return failure{err, runtime, knows}
		}
	}
	pair("gobreaker-probe-in-flight", "breaker.half-open", halfOpen(nil))
	pair("gobreaker-probe-in-flight-own-guard", "breaker.half-open", halfOpen([]errorclass.DescribeOption{errorclass.RefusedBy(errorclass.RefusedByBreaker)}))
	pair("x-time-rate-allow", "quota.limiter", func(env) failure {
		limiter := rate.NewLimiter(rate.Every(time.Minute), 1)
		limiter.Allow()
		if limiter.Allow() {
			return failure{nil, runtime, nil}
		}
		return failure{errors.New("provider calls: rate limit of 1 a minute reached"), runtime, []errorclass.DescribeOption{errorclass.RefusedBy(errorclass.RefusedByRateLimiter)}}
	})
	pair("x-time-rate-wait-own-guard", "quota.limiter", func(env) failure {
		limiter := rate.NewLimiter(rate.Every(time.Hour), 1)
		return failure{limiter.WaitN(context.Background(), 5), runtime, []errorclass.DescribeOption{errorclass.RefusedBy(errorclass.RefusedByRateLimiter)}}
	})
	pair("semaphore-try-acquire", "quota.bulkhead", func(env) failure {
		cap := semaphore.NewWeighted(1)
		_ = cap.Acquire(context.Background(), 1)
		defer cap.Release(1)
		if cap.TryAcquire(1) {
			return failure{nil, runtime, nil}
		}
		return failure{errors.New("concurrency cap of 1 provider call reached"), runtime, []errorclass.DescribeOption{errorclass.RefusedBy(errorclass.RefusedByConcurrencyLimit)}}
	})
	pair("semaphore-acquire-deadline", "quota.bulkhead", func(env) failure {
		// Acquire returns only the context's error: DeadlineExceeded, which says nothing of the cap.
		cap := semaphore.NewWeighted(1)
		_ = cap.Acquire(context.Background(), 1)
		defer cap.Release(1)
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		return failure{cap.Acquire(ctx, 1), runtime, []errorclass.DescribeOption{errorclass.RefusedBy(errorclass.RefusedByConcurrencyLimit)}}
	})
	pair("quota-check", "quota.tenant", func(env) failure {
		used, quota := 1000000, 1000000
		if used >= quota {
			return failure{fmt.Errorf("tenant t-42 used its monthly quota of %d tokens", quota), runtime, []errorclass.DescribeOption{errorclass.RefusedBy(errorclass.RefusedByQuota)}}
		}
		return failure{nil, runtime, nil}
	})
	pair("step-budget", "budget.tree", func(env) failure {
		return failure{errors.New("the run's step budget of 25 is used up"), runtime, []errorclass.DescribeOption{errorclass.RefusedBy(errorclass.RefusedByBudget)}}
	})
	// Our own content guard refusing the model's output.
	pair("regexp-guard", "guard.blocked", func(env) failure {
		ssn := regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`)
		output := "the customer's SSN is 078-05-1120"
		if loc := ssn.FindStringIndex(output); loc != nil {
			return failure{fmt.Errorf("output refused by our content policy: it holds an SSN at %d", loc[0]), guard, nil}
		}
		return failure{nil, guard, nil}
	})
	// Interceptors that veto on purpose.
	for _, kind := range []string{"budget", "quota", "policy"} {
		pair("interceptor-veto", "veto."+kind, func(env) failure {
			return failure{fmt.Errorf("before model call: %s veto", kind), interceptor, []errorclass.DescribeOption{errorclass.Veto(kind)}}
		})
	}
	// The agent definition.
	pair("encoding-json", "definition.syntax", func(env) failure {
		var def map[string]any
		return failure{json.Unmarshal([]byte("{\"name\": \"agent\",\n \"tools\": [}"), &def), runtime, []errorclass.DescribeOption{errorclass.DefinitionStage("parse")}}
	})
	pair("text-template", "definition.template", func(env) failure {
		_, err := template.New("system").Parse("You are {{ .Role ")
		return failure{err, runtime, []errorclass.DescribeOption{errorclass.DefinitionStage("compile")}}
	})
	// Reconciliation.
	pair("reconciler", "reconcile.vanished", func(env) failure {
		return failure{errors.New("run 42: worker process gone"), reconciler, []errorclass.DescribeOption{errorclass.ProviderCalls(0)}}
	})
	pair("reconciler", "reconcile.after-provider", func(env) failure {
		return failure{errors.New("run 43: worker process gone"), reconciler, []errorclass.DescribeOption{errorclass.ProviderCalls(3)}}
	})
}

// statusError is a tool's own error for a failed response (Go's net/http returns none).
type statusError struct {
	resp *http.Response
	body []byte
}

func (e *statusError) Error() string { return "tool API: " + e.resp.Status }

type level struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type answer struct {
	Pair       string         `json:"pair"`
	Descriptor map[string]any `json:"descriptor"`
	Chain      []level        `json:"chain"`
	Error      *string        `json:"error"`
}

func handle(line string) answer {
	var request struct {
		Pair     string `json:"pair"`
		Env      env    `json:"env"`
		Contract bool   `json:"contract"`
	}
	if err := json.Unmarshal([]byte(line), &request); err != nil {
		msg := err.Error()
		return answer{Error: &msg}
	}
	a := answer{Pair: request.Pair, Chain: []level{}}
	fn, ok := pairs[request.Pair]
	if !ok {
		msg := "no pair " + request.Pair
		a.Error = &msg
		return a
	}
	f := fn(request.Env)
	if f.err == nil {
		msg := "the pair raised nothing"
		a.Error = &msg
		return a
	}
	var opts []errorclass.DescribeOption
	if request.Contract {
		opts = f.knows
	}
	var d *errorclassv1.ExceptionDescriptor
	if se, ok := f.err.(*statusError); ok {
		d = errorclass.DescribeResponse(se.resp, se.body, f.origin, "", opts...)
	} else {
		d = errorclass.Describe(f.err, f.origin, "", opts...)
	}
	a.Descriptor = worker.DescriptorData(d)
	a.Chain = append(a.Chain, level{Type: d.Type, Message: d.Message})
	for _, c := range d.Causes {
		a.Chain = append(a.Chain, level{Type: c.Type, Message: c.Message})
	}
	return a
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--list" {
		ids := make([]string, 0, len(pairs))
		for id := range pairs {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		data, _ := json.Marshal(ids)
		fmt.Println(string(data))
		return
	}
	worker.Serve(handle)
}
