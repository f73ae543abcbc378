package errorclass

import (
	"net/http"
	"strings"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// DescribeResponse is the descriptor of a failed HTTP response that a raw client holds
// (net/http returns a 4xx or 5xx without an error): type *http.Response, the status, the
// provider's code and message from the body (read as Describe reads an SDK's error body)
// and AWS's x-amzn-ErrorType header. A status below 400 is no failure: nil.
func DescribeResponse(resp *http.Response, body []byte, origin errorclassv1.Origin, provider string, opts ...Option) *errorclassv1.ExceptionDescriptor {
	if resp == nil || resp.StatusCode < 400 || resp.StatusCode > 599 {
		return nil
	}
	ev := evidence{status: httpStatus(resp.StatusCode)}
	if awsType := strings.TrimSpace(resp.Header.Get("x-amzn-ErrorType")); awsType != "" {
		name := strings.SplitN(awsType, ":", 2)[0]
		ev.code = strings.TrimSpace(name[strings.LastIndex(name, "#")+1:])
	}
	ev.body(string(body))
	d := &errorclassv1.ExceptionDescriptor{
		Type:       "*http.Response",
		Origin:     origin,
		HttpStatus: ev.status,
		GrpcStatus: ev.grpc,
		Code:       cut(ev.code, MaxCodeChars),
		Message:    cut(withMessage(resp.Status, ev.message), MaxMessageChars),
		Language:   Language,
		Provider:   cut(strings.ToLower(strings.TrimSpace(provider)), MaxLabelChars),
	}
	for k, v := range ev.attributes {
		Attribute(k, v)(d)
	}
	for _, opt := range opts {
		opt(d)
	}
	return d
}
