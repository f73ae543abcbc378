package errorclass

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// DescribeResponse is the descriptor of a failed HTTP response that a raw client holds
// (net/http returns a 4xx or 5xx without an error): type *http.Response, the status, and
// the provider's code, gRPC status, message and attributes from its headers and the body
// the caller read (readErrorBody: OpenAI, Azure, Anthropic, Google, Bedrock, and bodies
// without an envelope). A status below 400 is no failure: nil (a 2xx that is a refusal
// is DescribeResponseJSON's).
func DescribeResponse(resp *http.Response, body []byte, origin errorclassv1.Origin, provider string, opts ...DescribeOption) *errorclassv1.ExceptionDescriptor {
	if resp == nil || resp.StatusCode < 400 || resp.StatusCode > 599 {
		return nil
	}
	status := httpStatus(resp.StatusCode)
	ev := readErrorBody(status, resp.Header, string(body))
	d := &errorclassv1.ExceptionDescriptor{
		Type:       "*http.Response",
		Origin:     origin,
		HttpStatus: status,
		GrpcStatus: ev.grpc,
		Code:       ev.code,
		Message:    withMessage(resp.Status, ev.message),
		Language:   Language,
		Provider:   provider,
		Attributes: newDescribeConfig(opts).apply(ev.attributes),
	}
	return Fit(d)
}

// failureReason holds every provider's failure reasons: a reason is a failure whatever
// the provider label, since an API is reached under many names.
var failureReason = func() map[string]bool {
	out := map[string]bool{}
	for _, reasons := range failureReasons {
		for _, reason := range reasons {
			out[reason] = true
		}
	}
	return out
}()

// DescribeFinishReason is the descriptor of a response that returned normally but ended
// with a failure reason: OpenAI's finish_reason content_filter (Azure's too), Anthropic's
// stop_reason refusal, Gemini's finishReason SAFETY (and the other block reasons), Bedrock
// Converse's stopReason guardrail_intervened. Nothing raised, so the convention every
// client follows sends it as a descriptor: type FinishReasonType, supertype
// ResponseFailureType, origin provider, the reason as the code (compared as the API
// spells it, stripped), a fixed message and the attribute model when given. A normal
// stop (stop, end_turn, STOP, tool_use) and a length cut-off (length, max_tokens) are
// no failure: nil.
func DescribeFinishReason(reason, provider, model string, opts ...DescribeOption) *errorclassv1.ExceptionDescriptor {
	return describeReason(reason, provider, model, false, newDescribeConfig(opts))
}

// DescribeBlockedPrompt is the descriptor of a prompt the provider refused before
// generating (Gemini's promptFeedback.blockReason): type PromptBlockedType, the block
// reason as the code. A reason that says the prompt was not blocked
// (BLOCKED_REASON_UNSPECIFIED, or none) gives nil.
func DescribeBlockedPrompt(reason, provider, model string, opts ...DescribeOption) *errorclassv1.ExceptionDescriptor {
	return describeReason(reason, provider, model, true, newDescribeConfig(opts))
}

func describeReason(reason, provider, model string, blocked bool, opts *describeConfig) *errorclassv1.ExceptionDescriptor {
	reason = strip(reason)
	provider = lower(strip(provider))
	var kind, template string
	switch {
	case blocked && slices.Contains(notBlocked, reason):
		return nil
	case blocked:
		kind, template = PromptBlockedType, promptBlockedMessage
	case failureReason[reason]:
		kind, template = FinishReasonType, finishReasonMessage
	default:
		return nil
	}
	var attributes map[string]string
	if model != "" {
		attributes = map[string]string{"model": model}
	}
	return Fit(&errorclassv1.ExceptionDescriptor{
		Type:       kind,
		Supertypes: []string{ResponseFailureType},
		Origin:     errorclassv1.Origin_ORIGIN_PROVIDER,
		Code:       reason,
		Message:    strings.NewReplacer("{provider}", provider, "{reason}", reason).Replace(template),
		Language:   Language,
		Provider:   provider,
		Attributes: opts.apply(attributes),
	})
}

// maxResponseDepth is how far DescribeResponseJSON follows nested lists (a stream's
// chunks); a response is shallow, so anything deeper is not one.
const maxResponseDepth = 6

// DescribeResponseJSON is the descriptor of a provider API's response that returned
// normally (a 2xx) but is a failure, or nil when it is none. It reads the reasons the
// response states, in this order, the first failure deciding: Gemini's
// promptFeedback.blockReason (a blocked prompt) and each candidates[].finishReason;
// OpenAI's choices[].finish_reason and a choices[].message.refusal; the Responses API's
// incomplete_details.reason and an output message's refusal part; Anthropic's
// stop_reason and a message_delta event's delta.stop_reason; Bedrock's stopReason and a
// messageStop event's stopReason; then an object's `response` (a Responses API stream
// event). A list is a stream's chunks or events, read in order.
//
// response is the body as JSON ([]byte, json.RawMessage or a string), a decoded value
// (map[string]any, []any), an SDK's response with RawJSON() (openai-go's ChatCompletion
// and chunks, anthropic-sdk-go's Message and stream events), a slice of those (a
// stream), or any value that encoding/json writes in the API's own spelling
// (google.golang.org/genai's GenerateContentResponse; aws-sdk-go-v2's ConverseOutput,
// whose StopReason is read too). provider is the label to send (azure for Azure OpenAI);
// "" takes the API's (openai, anthropic, gemini, bedrock). The model is the response's
// model (else modelVersion).
func DescribeResponseJSON(response any, provider string, opts ...DescribeOption) *errorclassv1.ExceptionDescriptor {
	config := newDescribeConfig(opts)
	var found *errorclassv1.ExceptionDescriptor
	walkReasons(asJSON(response), 0, func(api, reason string, blocked bool, model string) bool {
		label := provider
		if label == "" {
			label = api
		}
		found = describeReason(reason, label, model, blocked, config)
		return found != nil
	})
	return found
}

// asJSON is response as a decoded JSON value (see DescribeResponseJSON), or nil.
func asJSON(response any) any {
	switch r := response.(type) {
	case nil:
		return nil
	case []byte:
		value, _ := parseJSON(r)
		return value
	case json.RawMessage:
		value, _ := parseJSON(r)
		return value
	case string:
		value, _ := parseJSON([]byte(r))
		return value
	case map[string]any, []any:
		return r
	case interface{ RawJSON() string }:
		if raw := r.RawJSON(); raw != "" {
			value, _ := parseJSON([]byte(raw))
			return value
		}
	}
	if v := reflect.ValueOf(response); v.Kind() == reflect.Slice || v.Kind() == reflect.Array {
		items := make([]any, v.Len())
		for i := range items {
			items[i] = asJSON(v.Index(i).Interface())
		}
		return items
	}
	data, err := json.Marshal(response)
	if err != nil {
		return nil
	}
	value, _ := parseJSON(data)
	return value
}

// walkReasons calls found(api, reason, blocked, model) for every reason the response
// states, in DescribeResponseJSON's order, until found says stop.
func walkReasons(response any, depth int, found func(api, reason string, blocked bool, model string) bool) bool {
	if depth > maxResponseDepth {
		return false
	}
	if items, ok := response.([]any); ok {
		for _, item := range items {
			if walkReasons(item, depth+1, found) {
				return true
			}
		}
		return false
	}
	r, ok := response.(map[string]any)
	if !ok {
		return false
	}
	model := textOf(field(r, "model", "modelVersion"))
	say := func(api string, reason any, blocked bool) bool {
		return found(api, textOf(reason), blocked, model)
	}
	if block := textOf(field(object(field(r, "promptFeedback")), "blockReason")); block != "" && say("gemini", block, true) {
		return true
	}
	for _, candidate := range list(field(r, "candidates")) {
		if say("gemini", field(object(candidate), "finishReason"), false) {
			return true
		}
	}
	for _, choice := range list(field(r, "choices")) {
		c := object(choice)
		if say("openai", field(c, "finish_reason"), false) {
			return true
		}
		if textOf(field(object(field(c, "message")), "refusal")) != "" && say("openai", "refusal", false) {
			return true
		}
	}
	if details := object(field(r, "incomplete_details")); details != nil && say("openai", field(details, "reason"), false) {
		return true
	}
	for _, item := range list(field(r, "output")) {
		if field(object(item), "type") != "message" {
			continue
		}
		for _, part := range list(field(object(item), "content")) {
			if field(object(part), "type") == "refusal" && say("openai", "refusal", false) {
				return true
			}
		}
	}
	if say("anthropic", field(r, "stop_reason"), false) {
		return true
	}
	if field(r, "type") == "message_delta" && say("anthropic", field(object(field(r, "delta")), "stop_reason"), false) {
		return true
	}
	// aws-sdk-go-v2's ConverseOutput has no JSON tags: encoding/json writes StopReason.
	if say("bedrock", field(r, "stopReason", "StopReason"), false) {
		return true
	}
	if say("bedrock", field(object(field(r, "messageStop")), "stopReason"), false) {
		return true
	}
	// A Responses API stream event (response.incomplete) carries the response itself.
	if inner, ok := field(r, "response").(map[string]any); ok {
		return walkReasons(inner, depth+1, found)
	}
	return false
}

// field is the first of names present (and not null) in r.
func field(r map[string]any, names ...string) any {
	for _, name := range names {
		if value, ok := r[name]; ok && value != nil {
			return value
		}
	}
	return nil
}

func object(value any) map[string]any {
	r, _ := value.(map[string]any)
	return r
}

func list(value any) []any {
	items, _ := value.([]any)
	return items
}
