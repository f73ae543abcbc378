package errorclass

import (
	"sync"
	"time"

	"google.golang.org/grpc/codes"
)

// codeSet is the set of gRPC statuses named as facts.json names them (UNAVAILABLE).
func codeSet(names ...string) map[codes.Code]bool {
	out := make(map[codes.Code]bool, len(names))
	for _, name := range names {
		n, known := grpcCodes[name]
		if !known {
			panic("errorclass: facts.go names an unknown gRPC status " + name)
		}
		out[codes.Code(n)] = true
	}
	return out
}

// breakerState is the circuit breaker as a pure state machine, the same in every client
// (clients/spec/vectors/breaker.json drives it): it opens after `failures` consecutive
// tripping failures (breakerTripping: the service, not the request, is the problem), or
// at once on one of breakerOpensAtOnce (DEADLINE_EXCEEDED: a hung server costs one
// deadline); a success resets the count, a request's own error (INVALID_ARGUMENT,
// NOT_FOUND, ...) neither counts nor resets. While open no call is let through; a probe
// waits `reset` before it asks the service, doubling after each failed probe up to
// `maxReset`, and the first probe that succeeds closes it.
type breakerState struct {
	failures    int
	reset       time.Duration
	maxReset    time.Duration
	consecutive int
	open        bool
	wait        time.Duration // before the next probe, while open
}

func newBreakerState(failures int, reset, maxReset time.Duration) breakerState {
	return breakerState{failures: max(failures, 1), reset: reset, maxReset: max(maxReset, reset)}
}

// allow says whether a call may go to the network.
func (s *breakerState) allow() bool { return !s.open }

// result takes the outcome of a call the breaker let through (codes.OK for a success)
// and says whether it opened the breaker.
func (s *breakerState) result(code codes.Code) (opened bool) {
	switch {
	case code == codes.OK:
		s.consecutive = 0
		return false
	case !breakerTripping[code]:
		return false
	}
	s.consecutive++
	if s.open || (s.consecutive < s.failures && !breakerOpensAtOnce[code]) {
		return false
	}
	s.open, s.wait = true, s.reset
	return true
}

// probeWait is how long to wait before the next probe (while open).
func (s *breakerState) probeWait() time.Duration { return s.wait }

// probed takes a probe's outcome: a success closes the breaker, a failure doubles the
// wait before the next one.
func (s *breakerState) probed(ok bool) {
	if !s.open {
		return
	}
	if ok {
		s.open, s.consecutive = false, 0
		return
	}
	s.wait = min(s.wait*2, s.maxReset)
}

// maxProbes bounds a probe goroutine's rounds (each waits at least the reset time).
const maxProbes = 10000

// breaker is breakerState shared by a client's calls, with its probe on a goroutine of
// its own while open, so that no caller waits for it.
type breaker struct {
	probe    func() bool
	mu       sync.Mutex
	state    breakerState
	opened   int // times it opened, for tests and counters
	stop     chan struct{}
	stopOnce sync.Once
}

func newBreaker(probe func() bool, failures int, reset, maxReset time.Duration) *breaker {
	return &breaker{probe: probe, state: newBreakerState(failures, reset, maxReset), stop: make(chan struct{})}
}

func (b *breaker) allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state.allow()
}

func (b *breaker) result(code codes.Code) {
	b.mu.Lock()
	opened := b.state.result(code)
	if opened {
		b.opened++
	}
	b.mu.Unlock()
	if opened {
		go b.probing()
	}
}

func (b *breaker) probing() {
	for range maxProbes {
		b.mu.Lock()
		wait := b.state.probeWait()
		b.mu.Unlock()
		timer := time.NewTimer(wait)
		select {
		case <-b.stop:
			timer.Stop()
			return
		case <-timer.C:
		}
		ok := b.probe()
		b.mu.Lock()
		b.state.probed(ok)
		closed := b.state.allow()
		b.mu.Unlock()
		if closed {
			return
		}
	}
}

func (b *breaker) close() {
	b.stopOnce.Do(func() { close(b.stop) })
}
