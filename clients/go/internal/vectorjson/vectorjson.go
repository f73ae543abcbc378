// Package vectorjson reads a descriptor as the spec's vectors spell it (proto field
// names, origin by name, causes a list, attributes a map: clients/spec/README.md), for
// the programs beside the tests (the benchmark, the failover driver).
package vectorjson

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"

	errorclass "github.com/errorclass/classifier/clients/go"
	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// Descriptor is the descriptor of a vector's fields.
func Descriptor(fields map[string]any) (*errorclassv1.ExceptionDescriptor, error) {
	rest := make(map[string]any, len(fields))
	for k, v := range fields {
		if k != "origin" {
			rest[k] = v
		}
	}
	text, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	d := &errorclassv1.ExceptionDescriptor{}
	if err := protojson.Unmarshal(text, d); err != nil {
		return nil, err
	}
	if origin, given := fields["origin"]; given {
		name, ok := origin.(string)
		if !ok {
			return nil, fmt.Errorf("origin: %v is not a name", origin)
		}
		if d.Origin, err = errorclass.ParseOrigin(name); err != nil {
			return nil, err
		}
	}
	return d, nil
}
