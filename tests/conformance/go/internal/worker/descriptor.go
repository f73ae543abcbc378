// Package worker is what both Go workers of the conformance suite share, the SDK worker
// (the module's main) and the runtime worker (runtime/): the JSON-lines loop, and the
// descriptor in the descriptor-file shape (what `classifier classify` reads).
package worker

import (
	"strings"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// DescriptorData is d in the descriptor-file shape, empty fields left out; nil for nil.
func DescriptorData(d *errorclassv1.ExceptionDescriptor) map[string]any {
	if d == nil {
		return nil
	}
	out := map[string]any{"type": d.Type, "language": d.Language}
	put := func(key string, value string) {
		if value != "" {
			out[key] = value
		}
	}
	put("message", d.Message)
	put("code", d.Code)
	put("provider", d.Provider)
	if d.Origin != errorclassv1.Origin_ORIGIN_UNSPECIFIED {
		out["origin"] = strings.ToLower(strings.TrimPrefix(d.Origin.String(), "ORIGIN_"))
	}
	if d.HttpStatus != nil {
		out["http_status"] = *d.HttpStatus
	}
	if d.GrpcStatus != nil {
		out["grpc_status"] = *d.GrpcStatus
	}
	if len(d.Attributes) > 0 {
		out["attributes"] = d.Attributes
	}
	var causes []map[string]any
	for _, c := range d.Causes {
		cause := map[string]any{"type": c.Type}
		if c.Message != "" {
			cause["message"] = c.Message
		}
		if c.Code != "" {
			cause["code"] = c.Code
		}
		if c.HttpStatus != nil {
			cause["http_status"] = *c.HttpStatus
		}
		if c.GrpcStatus != nil {
			cause["grpc_status"] = *c.GrpcStatus
		}
		causes = append(causes, cause)
	}
	if causes != nil {
		out["causes"] = causes
	}
	return out
}
