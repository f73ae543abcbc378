// The Go side of the conformance suite: real SDK calls against the fake provider, each
// failure described with the Go client module's errorclass.Describe.
//
//	worker           one JSON request per stdin line, one JSON answer per stdout line
//	worker --list    the drivers and the APIs each can call, as JSON
//
// A request is {"sdk": "go.openai", "base": "http://127.0.0.1:PORT/s/<id>", "scenario":
// {"id", "api", "stream": bool, "fault": null | name, "request": {...}}}. The answer is
// {"sdk", "id", "outcome": "error" | "response" | "driver_error", "descriptor": {...} |
// null, "chain": [...]}: the descriptor in the descriptor-file shape (what `classifier
// classify` reads), and the error's chain (%T and text per level) for reports. Python
// classifies the descriptor over gRPC (tests/conformance/go_drivers.py). Calls run one
// at a time, so the fake provider's per-scenario request count belongs to one call.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"time"

	errorclass "github.com/errorclass/classifier/clients/go"
	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
	"github.com/errorclass/classifier/tests/conformance/go/internal/worker"
)

// callLimit: a driver that neither returns nor times out by then is a driver bug.
const callLimit = 15 * time.Second

type scenario struct {
	ID      string         `json:"id"`
	API     string         `json:"api"`
	Stream  bool           `json:"stream"`
	Fault   *string        `json:"fault"`
	Request map[string]any `json:"request"`
}

func (s scenario) option(name, fallback string) string {
	if v, ok := s.Request[name].(string); ok && v != "" {
		return v
	}
	return fallback
}

type request struct {
	SDK      string   `json:"sdk"`
	Base     string   `json:"base"`
	Scenario scenario `json:"scenario"`
}

type level struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type answer struct {
	SDK        string         `json:"sdk"`
	ID         string         `json:"id"`
	Outcome    string         `json:"outcome"`
	Descriptor map[string]any `json:"descriptor"`
	Chain      []level        `json:"chain"`
}

// result is what a driver's call ended with: an error, or the descriptor of what returned
// (a failed HTTP response a raw client holds, described with errorclass.DescribeResponse; a
// 2xx that ends with a refusal or filter, with errorclass.DescribeResponseJSON), or nothing.
type result struct {
	err      error
	response *errorclassv1.ExceptionDescriptor
}

type driver struct {
	apis []string
	call func(ctx context.Context, s scenario, base string) result
}

var drivers = map[string]driver{}

func register(name string, apis []string, call func(ctx context.Context, s scenario, base string) result) {
	drivers[name] = driver{apis: apis, call: call}
}

func chainOf(d *errorclassv1.ExceptionDescriptor) []level {
	if d == nil {
		return []level{}
	}
	out := []level{{Type: d.Type, Message: short(d.Message)}}
	for _, c := range d.Causes {
		out = append(out, level{Type: c.Type, Message: short(c.Message)})
	}
	return out
}

func short(text string) string {
	if len(text) > 200 {
		return text[:200]
	}
	return text
}

func handle(r request) answer {
	a := answer{SDK: r.SDK, ID: r.Scenario.ID, Chain: []level{}}
	d, ok := drivers[r.SDK]
	if !ok {
		a.Outcome, a.Chain = "driver_error", []level{{Message: "no driver " + r.SDK}}
		return a
	}
	ctx, cancel := context.WithTimeout(context.Background(), callLimit)
	defer cancel()
	done := make(chan result, 1)
	go func() { done <- d.call(ctx, r.Scenario, r.Base) }()
	var got result
	select {
	case got = <-done:
	case <-time.After(callLimit + time.Second):
		a.Outcome, a.Chain = "driver_error", []level{{Message: fmt.Sprintf("driver %s did not return in %s", r.SDK, callLimit)}}
		return a
	}
	var desc *errorclassv1.ExceptionDescriptor
	switch {
	case got.err != nil:
		a.Outcome = "error"
		desc = errorclass.Describe(got.err, errorclassv1.Origin_ORIGIN_PROVIDER, r.Scenario.API)
	case got.response != nil:
		a.Outcome = "response"
		desc = got.response
	default:
		a.Outcome = "response"
	}
	a.Descriptor = worker.DescriptorData(desc)
	a.Chain = chainOf(desc)
	return a
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--list" {
		listed := map[string][]string{}
		for name, d := range drivers {
			listed[name] = d.apis
		}
		out, _ := json.Marshal(listed)
		fmt.Println(string(out))
		return
	}
	worker.Serve(func(line string) answer {
		var r request
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return answer{Outcome: "driver_error", Chain: []level{{Message: err.Error()}}}
		}
		return handle(r)
	})
}
