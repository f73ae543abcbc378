package errorclass

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// How long a retryable answer advises waiting, read from the provider's own evidence: a
// port of the service's classifier/engine/retry_after.py (and classifier/durations.py),
// held to it by the spec's retry_after vectors. A bundle answers with it in process as
// the service does; the service's answers carry it in ClassifyResponse.retry_after.

// The attributes a wait is read from (the descriptor's evidence, Describe keeps them),
// in the order of precedence; the resets of one provider are one step, the latest wins.
const (
	retryAfterMS     = HeaderAttributePrefix + "retry-after-ms"
	xMSRetryAfterMS  = HeaderAttributePrefix + "x-ms-retry-after-ms"
	retryAfterHeader = HeaderAttributePrefix + "retry-after"
	retryDelay       = "google.rpc.retry_info.retry_delay"
	providerDate     = HeaderAttributePrefix + "date"
	cappedLabel      = " (capped)"
)

var (
	openAIResets    = []string{HeaderAttributePrefix + "x-ratelimit-reset-requests", HeaderAttributePrefix + "x-ratelimit-reset-tokens"}
	anthropicResets = []string{
		HeaderAttributePrefix + "anthropic-ratelimit-requests-reset",
		HeaderAttributePrefix + "anthropic-ratelimit-tokens-reset",
		HeaderAttributePrefix + "anthropic-ratelimit-input-tokens-reset",
		HeaderAttributePrefix + "anthropic-ratelimit-output-tokens-reset",
	}
)

// RetryWait is the wait an answer advises and where it came from.
type RetryWait struct {
	// Wait is how long to wait before the retry, at the service's resolution (whole
	// microseconds).
	Wait time.Duration
	// Source is the attribute the wait was read from (http.response.header.retry-after).
	Source string
	// Capped is true when the provider asked for longer and the cap cut it: Wait is the cap.
	Capped bool
}

// LabelledSource is the source as ClassifyResponse.retry_after_source says it: the
// attribute, with " (capped)" when the cap cut the wait.
func (w RetryWait) LabelledSource() string {
	if w.Capped {
		return w.Source + cappedLabel
	}
	return w.Source
}

// ReadRetryAfter is the wait the provider's evidence in attributes asks for, at most
// limit, and whether any attribute says one; the caller decides that the answer is
// retryable (a wait is never advised for one that is not). now is the runtime's clock
// (nil: time.Now), read only when a date must become a wait and the provider sent no readable `date`
// header (the provider's own clock, which compares like with like). Sources in order:
// retry-after-ms, x-ms-retry-after-ms (milliseconds), retry-after (seconds or an HTTP
// date), Google's RetryInfo retry_delay (a proto Duration, `25s`), OpenAI's reset
// headers (Go durations, `6m0s`: the later), Anthropic's RFC 3339 resets (the latest). A
// value that does not read is skipped and the next source read; a date past is 0.
func ReadRetryAfter(attributes map[string]string, limit time.Duration, now func() time.Time) (RetryWait, bool) {
	if !hasEvidence(attributes) {
		return RetryWait{}, false
	}
	clock := &providerClock{attributes: attributes, now: now}
	source, seconds, found := one(attributes, retryAfterMS, milliseconds)
	if !found {
		source, seconds, found = one(attributes, xMSRetryAfterMS, milliseconds)
	}
	if !found {
		source, seconds, found = one(attributes, retryAfterHeader, func(v string) (float64, bool) {
			if s, ok := decimalSeconds(v); ok {
				return s, true
			}
			when, ok := httpDate(v)
			return clock.until(when, ok)
		})
	}
	if !found {
		source, seconds, found = one(attributes, retryDelay, protoDuration)
	}
	if !found {
		source, seconds, found = latest(attributes, openAIResets, goDuration)
	}
	if !found {
		source, seconds, found = latest(attributes, anthropicResets, func(v string) (float64, bool) {
			when, ok := timestamp(v)
			return clock.until(when, ok)
		})
	}
	if !found {
		return RetryWait{}, false
	}
	if seconds > limit.Seconds() {
		return RetryWait{Wait: limit, Source: source, Capped: true}, true
	}
	return RetryWait{Wait: microseconds(seconds), Source: source}, true
}

func hasEvidence(attributes map[string]string) bool {
	for _, name := range []string{retryAfterMS, xMSRetryAfterMS, retryAfterHeader, retryDelay} {
		if _, ok := attributes[name]; ok {
			return true
		}
	}
	for _, names := range [][]string{openAIResets, anthropicResets} {
		for _, name := range names {
			if _, ok := attributes[name]; ok {
				return true
			}
		}
	}
	return false
}

func one(attributes map[string]string, name string, read func(string) (float64, bool)) (string, float64, bool) {
	value, ok := attributes[name]
	if !ok {
		return "", 0, false
	}
	seconds, ok := read(value)
	if !ok {
		return "", 0, false
	}
	return name, seconds, true
}

// latest is the longest wait among the readable attributes of one provider's resets
// (the first named, on a tie).
func latest(attributes map[string]string, names []string, read func(string) (float64, bool)) (string, float64, bool) {
	var best string
	var most float64
	for _, name := range names {
		if source, seconds, ok := one(attributes, name, read); ok && (best == "" || seconds > most) {
			best, most = source, seconds
		}
	}
	return best, most, best != ""
}

// microseconds is a wait in seconds as the service's timedelta holds it: whole
// microseconds, rounded half to even (the whole part and the fraction apart, as
// Python's timedelta reads a float).
func microseconds(seconds float64) time.Duration {
	whole, fraction := math.Modf(seconds)
	us := whole*1e6 + math.RoundToEven(fraction*1e6)
	if us >= float64(math.MaxInt64/int64(time.Microsecond)) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(us) * time.Microsecond
}

func milliseconds(value string) (float64, bool) {
	ms, ok := decimalSeconds(value)
	return ms / 1000, ok
}

// providerClock is now as the provider saw it: its `date` header, else the runtime's
// clock (read once, and only if a date needs it).
type providerClock struct {
	attributes map[string]string
	now        func() time.Time
	value      time.Time
	read       bool
}

func (c *providerClock) get() time.Time {
	if !c.read {
		c.read = true
		if date, ok := c.attributes[providerDate]; ok {
			if when, ok := httpDate(date); ok {
				c.value = when
				return c.value
			}
		}
		if c.now != nil {
			c.value = c.now()
		} else {
			c.value = time.Now()
		}
		c.value = c.value.Truncate(time.Microsecond) // the service's resolution
	}
	return c.value
}

// until is the wait until when (0 when it is past), or nothing when when did not read.
func (c *providerClock) until(when time.Time, ok bool) (float64, bool) {
	if !ok {
		return 0, false
	}
	return max(0, when.Sub(c.get()).Seconds()), true
}

// httpLayouts are the HTTP date forms (RFC 9110: IMF-fixdate, the obsolete RFC 850 and
// asctime forms, which net/http.ParseTime reads), then what the service's email.utils
// reads too and providers have been seen to send: a numeric zone, UTC, no zone (GMT).
var httpLayouts = []string{
	time.RFC1123Z,
	"Mon, 2 Jan 2006 15:04:05 UTC",
	"Mon, 2 Jan 2006 15:04:05 GMT",
	"Mon, 2 Jan 2006 15:04:05",
}

// httpDate reads an HTTP date; one without a zone is GMT, as HTTP dates are.
func httpDate(value string) (time.Time, bool) {
	text := strip(value)
	if when, err := http.ParseTime(text); err == nil {
		return when, true
	}
	for _, layout := range httpLayouts {
		if when, err := time.Parse(layout, text); err == nil {
			return when, true
		}
	}
	return time.Time{}, false
}

// timestamp reads an RFC 3339 timestamp with its offset (`2025-06-01T12:00:30Z`, a
// fraction and `+01:00` or `+0100` too); one without a zone says nothing certain and
// does not read. Its resolution is the service's, microseconds (a longer fraction is cut).
func timestamp(value string) (time.Time, bool) {
	text := strings.ToUpper(strip(value))
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700"} {
		if when, err := time.Parse(layout, text); err == nil {
			return when.Truncate(time.Microsecond), true
		}
	}
	return time.Time{}, false
}

// Durations as providers write them, each form read one way (classifier/durations.py):
// seconds as a float64, or false for text that does not read. Signs are refused (no
// provider asks for a negative wait), only ASCII digits are digits, and a number too
// large for a float64 is infinity, which any cap cuts. Go's time.ParseDuration is not
// used: it reads signs and refuses what overflows an int64 of nanoseconds.

// decimalSeconds is a non-negative decimal number (`20`, `1.5`): Retry-After's
// delay-seconds is a whole number, but SDKs read a fraction too.
func decimalSeconds(value string) (float64, bool) {
	text := strip(value)
	digits := leadingDigits(text)
	if digits == 0 {
		return 0, false
	}
	if rest := text[digits:]; rest != "" {
		if rest[0] != '.' || leadingDigits(rest[1:]) != len(rest)-1 || len(rest) == 1 {
			return 0, false
		}
	}
	return parseFloat(text)
}

// protoDuration is proto3 JSON's Duration: seconds with up to nine decimals and an `s`
// (`25s`, `0.5s`), as google.rpc.RetryInfo's retryDelay is written.
func protoDuration(value string) (float64, bool) {
	text := strip(value)
	body, ok := strings.CutSuffix(text, "s")
	if !ok {
		return 0, false
	}
	digits := leadingDigits(body)
	if digits == 0 {
		return 0, false
	}
	if rest := body[digits:]; rest != "" {
		fraction := len(rest) - 1
		if rest[0] != '.' || leadingDigits(rest[1:]) != fraction || fraction < 1 || fraction > 9 {
			return 0, false
		}
	}
	return parseFloat(body)
}

// goUnits are time.Duration's units in seconds, longest spelling first.
var goUnits = []struct {
	name    string
	seconds float64
}{
	{"ns", 1e-9}, {"us", 1e-6}, {"µs", 1e-6}, {"μs", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600},
}

// goDuration is Go's time.Duration text, as OpenAI's x-ratelimit-reset-* are written:
// one or more decimal numbers each with a unit (`6m0s`, `1.5h`, `20ms`, `2h3m4.5s`), or `0`.
func goDuration(value string) (float64, bool) {
	text := strip(value)
	if text == "0" {
		return 0, true
	}
	if text == "" {
		return 0, false
	}
	total := 0.0
	for text != "" {
		// a number: digits with an optional fraction (`1.`, `1.5`), or a fraction alone (`.5`)
		n := leadingDigits(text)
		if n < len(text) && text[n] == '.' {
			n += 1 + leadingDigits(text[n+1:])
		}
		if n == 0 || text[:n] == "." {
			return 0, false
		}
		number, ok := parseFloat(text[:n])
		if !ok {
			return 0, false
		}
		text = text[n:]
		unit := -1
		for i, u := range goUnits {
			if strings.HasPrefix(text, u.name) {
				unit = i
				break
			}
		}
		if unit < 0 {
			return 0, false
		}
		// `m` must not be read as the start of `ms`: goUnits has ms before m and s
		total += number * goUnits[unit].seconds
		text = text[len(goUnits[unit].name):]
	}
	return total, true
}

func leadingDigits(text string) int {
	i := 0
	for i < len(text) && text[i] >= '0' && text[i] <= '9' {
		i++
	}
	return i
}

// parseFloat reads text already checked to be digits and a fraction; one too large is
// infinity, as Python's float reads it.
func parseFloat(text string) (float64, bool) {
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !math.IsInf(f, 1) {
		return 0, false
	}
	return f, true
}
