// Package errorclass turns a Go error into the classifier's exception descriptor
// (Describe), as well as a failed HTTP response (DescribeResponse) and a response that
// returned normally but ended with a refusal or a filter (DescribeResponseJSON,
// DescribeFinishReason), and asks the classifier service for its class (NewClient,
// Client.Classify).
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

// Describe builds the descriptor of err: its %T and message, the chain below it (through
// Unwrap() error and Unwrap() []error, depth first, each error once, at most MaxCauses)
// as causes, and the evidence the errors carry: the HTTP status, the provider's code and
// the gRPC status (the first error in the chain that has each, outermost first), the
// provider's error body, timeouts and the context's deadline or cancel; then the
// options' attributes, and Fit, so the service never refuses it. It never fails and
// never panics; a nil err gives nil.
func Describe(err error, origin errorclassv1.Origin, provider string, opts ...DescribeOption) *errorclassv1.ExceptionDescriptor {
	return describe(err, origin, provider, newDescribeConfig(opts))
}

func describe(err error, origin errorclassv1.Origin, provider string, opts *describeConfig) *errorclassv1.ExceptionDescriptor {
	if err == nil {
		return nil
	}
	top := evidenceOf(err)
	d := &errorclassv1.ExceptionDescriptor{
		Type:       typeName(err),
		Origin:     origin,
		Language:   Language,
		Provider:   provider,
		HttpStatus: top.status,
		GrpcStatus: top.grpc,
		Code:       top.code,
	}
	below := chain(err)
	timeout := top.timeout
	said := top.message
	for _, e := range below {
		ev := evidenceOf(e)
		d.Causes = append(d.Causes, &errorclassv1.Cause{
			Type: typeName(e), Message: message(e), HttpStatus: ev.status, GrpcStatus: ev.grpc, Code: ev.code,
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
		top.keep(ev.attributes) // the outermost error's word on each attribute wins
		if said == "" {
			said = ev.message
		}
		timeout = timeout || ev.timeout
	}
	d.Message = withMessage(message(err), said)
	d.Attributes = map[string]string{}
	for k, v := range top.attributes {
		d.Attributes[k] = v
	}
	if timeout {
		d.Attributes[AttrTimeout] = "true"
	}
	switch {
	case holds(err, below, context.DeadlineExceeded):
		d.Attributes[AttrContext] = "deadline_exceeded"
	case holds(err, below, context.Canceled):
		d.Attributes[AttrContext] = "canceled"
	}
	d.Attributes = opts.apply(d.Attributes)
	return Fit(d)
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

func typeName(e error) string { return fmt.Sprintf("%T", e) }

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
