// Package errorclass turns a Go error into the classifier's exception descriptor
// (Describe) and asks the classifier service for its class (Dial, Client.Classify).
//
// Go errors carry little by type: a failure is a chain of wrappers (*url.Error around
// *net.OpError around a syscall error, fmt.Errorf's %w, errors.Join) and an SDK keeps
// the HTTP status and the provider's code in fields. Describe sends the %T of every
// error in the chain and reads that evidence from the real SDKs' errors through
// interfaces and reflection, so this module depends on none of them.
package errorclass

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// Language is the descriptor's language.
const Language = "go"

// The attributes Describe sets from what the chain says (rules key on them):
const (
	// AttrTimeout is "true" when an error in the chain says Timeout() (net.Error,
	// context.DeadlineExceeded, os.ErrDeadlineExceeded, an SDK's timeout error).
	AttrTimeout = "timeout"
	// AttrContext is "deadline_exceeded" or "canceled" when the chain holds
	// context.DeadlineExceeded or context.Canceled (errors.Is).
	AttrContext = "context"
)

// The runtime contract's attributes (tests/conformance/runtime/README.md): what only the
// runtime knows. Set them with the options below, never by hand.
const (
	attrTimeLimit     = "time_limit"
	attrVeto          = "veto"
	attrStage         = "stage"
	attrProviderCalls = "provider_calls"
)

// Option adds what only the runtime knows to a descriptor.
type Option func(d *errorclassv1.ExceptionDescriptor)

// ToolTimeLimit says the tool wrapper's own time limit fired (origin tool): ToolTimeout.
func ToolTimeLimit() Option { return Attribute(attrTimeLimit, "tool") }

// RunTimeLimit says the run's (or step's) deadline fired: Timeout.
func RunTimeLimit() Option { return Attribute(attrTimeLimit, "run") }

// Veto says an interceptor vetoed the next step on purpose (origin interceptor):
// "budget", "quota" or "policy".
func Veto(kind string) Option { return Attribute(attrVeto, kind) }

// DefinitionStage says the runtime failed on the agent definition (origin runtime):
// "load", "parse", "compile" or "validate".
func DefinitionStage(stage string) Option { return Attribute(attrStage, stage) }

// ProviderCalls is the count orphaned-run reconciliation found (origin reconciler).
func ProviderCalls(n int) Option { return Attribute(attrProviderCalls, fmt.Sprint(n)) }

// Attribute sets any other attribute the runtime knows (kept within the limits).
func Attribute(key, value string) Option {
	return func(d *errorclassv1.ExceptionDescriptor) {
		if key == "" || utf8.RuneCountInString(key) > MaxAttributeKeyChars {
			return
		}
		if _, ok := d.Attributes[key]; !ok && len(d.Attributes) >= MaxAttributes {
			return
		}
		if d.Attributes == nil {
			d.Attributes = map[string]string{}
		}
		d.Attributes[key] = cut(value, MaxAttributeValueChars)
	}
}

// Describe builds the descriptor of err: its %T and message, the chain below it (through
// Unwrap() error and Unwrap() []error, depth first, each error once, at most MaxCauses)
// as causes, and the evidence the errors carry: the HTTP status, the provider's code and
// the gRPC status (the first error in the chain that has each, outermost first), the
// provider's error body, timeouts and the context's deadline or cancel. It never fails
// and never panics; a nil err gives nil.
func Describe(err error, origin errorclassv1.Origin, provider string, opts ...Option) *errorclassv1.ExceptionDescriptor {
	if err == nil {
		return nil
	}
	top := evidenceOf(err)
	d := &errorclassv1.ExceptionDescriptor{
		Type:       typeName(err),
		Origin:     origin,
		Language:   Language,
		Provider:   cut(strings.ToLower(strings.TrimSpace(provider)), MaxLabelChars),
		HttpStatus: top.status,
		GrpcStatus: top.grpc,
		Code:       top.code,
	}
	below := chain(err)
	attrs := top.attributes
	timeout := top.timeout
	said := top.message
	for _, e := range below {
		ev := evidenceOf(e)
		d.Causes = append(d.Causes, &errorclassv1.Cause{
			Type: typeName(e), Message: cut(message(e), MaxMessageChars),
			HttpStatus: ev.status, GrpcStatus: ev.grpc, Code: ev.code,
		})
		if d.HttpStatus == nil {
			d.HttpStatus = ev.status
		}
		if d.GrpcStatus == nil {
			d.GrpcStatus = ev.grpc
		}
		if d.Code == "" {
			d.Code = ev.code
		}
		if attrs == nil {
			attrs = ev.attributes
		}
		if said == "" {
			said = ev.message
		}
		timeout = timeout || ev.timeout
	}
	d.Message = cut(withMessage(message(err), said), MaxMessageChars)
	for k, v := range attrs {
		Attribute(k, v)(d)
	}
	if timeout {
		Attribute(AttrTimeout, "true")(d)
	}
	switch {
	case holds(err, below, context.DeadlineExceeded):
		Attribute(AttrContext, "deadline_exceeded")(d)
	case holds(err, below, context.Canceled):
		Attribute(AttrContext, "canceled")(d)
	}
	for _, opt := range opts {
		opt(d)
	}
	return d
}

// withMessage is text, followed by the provider's own message when text lacks it
// (openai-go's Error() is "OpenAI API error: 400 Bad Request"; rules read the message).
func withMessage(text, said string) string {
	if said == "" || strings.Contains(text, said) {
		return text
	}
	if text == "" {
		return said
	}
	return text + "\n" + said
}

// chain is every error below err, depth first (an errors.Join's first branch to its end
// before the second), each error once, at most MaxCauses.
func chain(err error) []error {
	var out []error
	seen := map[any]bool{key(err): true}
	var walk func(e error, depth int)
	walk = func(e error, depth int) {
		if depth > MaxCauses {
			return
		}
		for _, next := range unwrapped(e) {
			if len(out) >= MaxCauses {
				return
			}
			k := key(next)
			if next == nil || seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, next)
			walk(next, depth+1)
		}
	}
	walk(err, 0)
	return out
}

// unwrapped is what e wraps; an Unwrap that panics wraps nothing.
func unwrapped(e error) (out []error) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	switch u := e.(type) {
	case interface{ Unwrap() []error }:
		return u.Unwrap()
	case interface{ Unwrap() error }:
		if next := u.Unwrap(); next != nil {
			return []error{next}
		}
	}
	return nil
}

// key identifies an error for "each error once": a pointer by its address, a comparable
// value by itself, anything else by its type and text.
func key(e error) any {
	v := reflect.ValueOf(e)
	if !v.IsValid() {
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.Slice, reflect.UnsafePointer:
		return [2]any{v.Type(), v.Pointer()}
	}
	if v.Comparable() {
		return e
	}
	return [2]any{v.Type(), message(e)}
}

func typeName(e error) string {
	return cut(fmt.Sprintf("%T", e), MaxTypeNameChars)
}

// message is e.Error(), or the panic's text when Error panics (a typed nil pointer).
func message(e error) (text string) {
	defer func() {
		if r := recover(); r != nil {
			text = fmt.Sprintf("(Error() panicked: %v)", r)
		}
	}()
	return e.Error()
}

// holds is errors.Is(err, target) over the walked chain: errors.Is itself never ends on
// a chain that wraps itself.
func holds(err error, below []error, target error) bool {
	for _, e := range append([]error{err}, below...) {
		if is(e, target) {
			return true
		}
	}
	return false
}

func is(e, target error) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	if reflect.TypeOf(e).Comparable() && e == target {
		return true
	}
	if x, ok := e.(interface{ Is(error) bool }); ok {
		return x.Is(target)
	}
	return false
}

// cut keeps the first limit characters (code points, as the service counts them).
func cut(text string, limit int) string {
	if utf8.RuneCountInString(text) <= limit {
		return text
	}
	n := 0
	for i := range text {
		if n == limit {
			return text[:i]
		}
		n++
	}
	return text
}
