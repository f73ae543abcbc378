package errorclass

import (
	"strings"
	"time"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// Answer is a classification: the service's (Client.Classify and the other calls) or one
// a bundle gave in process (Bundle.Classify, Local). It embeds the service's
// ClassifyResponse, so both read the same fields (ClassName, ErrorClass, Effect, Action,
// Retryable, RuleId, RulesetVersion, RulesetDigest, UnknownReason), and a local answer
// is the ClassifyResponse the service would have sent for the same descriptor.
type Answer struct {
	*errorclassv1.ClassifyResponse
	// Local is true when a bundle answered in process, not the service.
	Local bool
	// BundleDigest is the bundle that answered (sha256:<hex> of its bytes, what
	// RulesetInfo.bundle_digest names); empty when the service answered.
	BundleDigest string
}

// RetryAfter is how long to wait before a retry and whether the answer says: set when
// the answer is retryable and the provider said when (a Retry-After or rate-limit reset
// header, Google's RetryInfo: the descriptor's evidence attributes), capped by the
// ruleset. RetryAfterSource names the attribute it was read from, with " (capped)" when
// the cap cut the wait. A bundle's local answer has the same wait the service computes
// (ReadRetryAfter, the rule's cap).
func (a *Answer) RetryAfter() (time.Duration, bool) {
	if a == nil || a.ClassifyResponse == nil || a.ClassifyResponse.RetryAfter == nil {
		return 0, false
	}
	return a.ClassifyResponse.RetryAfter.AsDuration(), true
}

// RetryWait is RetryAfter with its source apart from whether the cap cut it.
func (a *Answer) RetryWait() (RetryWait, bool) {
	wait, ok := a.RetryAfter()
	if !ok {
		return RetryWait{}, false
	}
	source, capped := strings.CutSuffix(a.RetryAfterSource, cappedLabel)
	return RetryWait{Wait: wait, Source: source, Capped: capped}, true
}

// served wraps the service's answers.
func served(responses ...*errorclassv1.ClassifyResponse) []*Answer {
	out := make([]*Answer, len(responses))
	for i, r := range responses {
		out[i] = &Answer{ClassifyResponse: r}
	}
	return out
}

// EffectName is the effect as the decision log and the spec's vectors name it (fail,
// pause, continue; unspecified for an Unknown, or a number these stubs do not know).
func (a *Answer) EffectName() string {
	if e := int(a.GetEffect()); e >= 0 && e < len(effectNames) {
		return effectNames[e]
	}
	return effectNames[0]
}

// UnknownReasonName is why the answer is Unknown (no_match, conflict), or "" when it is
// not.
func (a *Answer) UnknownReasonName() string {
	if r := int(a.GetUnknownReason()); r > 0 && r < len(unknownReasonNames) {
		return unknownReasonNames[r]
	}
	return ""
}
