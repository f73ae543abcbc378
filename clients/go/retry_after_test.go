package errorclass

import (
	"testing"
	"time"
)

// The forms where Go's own parsers read otherwise than the service (the retry_after
// vectors hold the rest): time.ParseDuration reads signs and refuses a wait past an
// int64 of nanoseconds, net/http.ParseTime reads only GMT.
func TestWaitsAreReadAsTheServiceReadsThemNotAsGoParsesThem(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reset := HeaderAttributePrefix + "x-ratelimit-reset-tokens"
	for _, c := range []struct {
		name, attribute, value string
		want                   time.Duration
		capped, read           bool
	}{
		{"a Go duration with a sign", reset, "-1s", 0, false, false},
		{"a Go duration with a plus", reset, "+1s", 0, false, false},
		{"a Go duration past int64 nanoseconds", reset, "3000000h", time.Minute, true, true},
		{"a Go duration with a greek mu", reset, "250μs", 250 * time.Microsecond, false, true},
		{"a Go duration of a bare fraction", reset, ".5s", 500 * time.Millisecond, false, true},
		{"a Go duration of a bare dot", reset, ".s", 0, false, false},
		{"a Go duration without a unit after a part", reset, "1m30", 0, false, false},
		{"milliseconds with an exponent", HeaderAttributePrefix + "retry-after-ms", "9e9", 0, false, false},
		{"an HTTP date with a numeric zone", HeaderAttributePrefix + "retry-after", "Thu, 01 Jan 2026 01:00:30 +0100", 30 * time.Second, false, true},
		{"an RFC 3339 reset in lower case", HeaderAttributePrefix + "anthropic-ratelimit-tokens-reset", "2026-01-01t00:00:09z", 9 * time.Second, false, true},
		{"an RFC 3339 reset past microseconds", HeaderAttributePrefix + "anthropic-ratelimit-tokens-reset", "2026-01-01T00:00:01.0000019Z", time.Second + time.Microsecond, false, true},
		{"a RetryInfo delay with ten decimals", retryDelay, "1.0000000001s", 0, false, false},
	} {
		wait, ok := ReadRetryAfter(map[string]string{c.attribute: c.value}, time.Minute, func() time.Time { return now })
		if ok != c.read || wait.Wait != c.want || wait.Capped != c.capped || (ok && wait.Source != c.attribute) {
			t.Errorf("%s (%q): %+v %v, want %v capped %v read %v", c.name, c.value, wait, ok, c.want, c.capped, c.read)
		}
	}
}

func TestNowIsReadOnlyWhenADateNeedsIt(t *testing.T) {
	asked := 0
	clock := func() time.Time { asked++; return time.Now() }
	if _, ok := ReadRetryAfter(map[string]string{HeaderAttributePrefix + "retry-after": "3"}, time.Minute, clock); !ok || asked != 0 {
		t.Fatalf("seconds: read %v, the clock asked %d times", ok, asked)
	}
	date := map[string]string{
		HeaderAttributePrefix + "retry-after": "Thu, 01 Jan 2026 00:00:30 GMT",
		HeaderAttributePrefix + "date":        "Thu, 01 Jan 2026 00:00:00 GMT",
	}
	if wait, ok := ReadRetryAfter(date, time.Minute, clock); !ok || wait.Wait != 30*time.Second || asked != 0 {
		t.Fatalf("a date against the provider's date: %+v, the clock asked %d times", wait, asked)
	}
}
