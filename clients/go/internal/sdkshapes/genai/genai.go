// Package genai declares google.golang.org/genai's APIError as that SDK declares it
// (api_client.go, v1.77.0), for the tests of the module: Describe reads it by its type
// name, genai.APIError, and this module depends on no SDK.
package genai

import "fmt"

// APIError is what genai returns for an error response, and yields for an error event
// inside a stream (the body's google.rpc.Status).
type APIError struct {
	// Code is the HTTP response status code.
	Code int `json:"code,omitempty"`
	// Message is the server response message.
	Message string `json:"message,omitempty"`
	// Status is the server response status.
	Status string `json:"status,omitempty"`
	// Details field provides more context to an error.
	Details []map[string]any `json:"details,omitempty"`
}

func (e APIError) Error() string {
	return fmt.Sprintf("Error %d, Message: %s, Status: %s, Details: %v", e.Code, e.Message, e.Status, e.Details)
}
