package errorclass

import (
	"sync"
	"time"

	"google.golang.org/grpc/codes"
)

// The breaker's defaults, the Python client's (classifier/client/breaker.py).
const (
	DefaultBreakerFailures = 3
	DefaultBreakerReset    = 2 * time.Second
	MaxBreakerReset        = 30 * time.Second
	maxProbes              = 10000 // bounded; each round waits at least the reset time
)

// tripping are the statuses that say the service, not the request, is the problem.
var tripping = map[codes.Code]bool{
	codes.Unavailable:       true,
	codes.DeadlineExceeded:  true,
	codes.ResourceExhausted: true,
	codes.Internal:          true,
	codes.Unknown:           true,
}

// breaker stops calling a service that keeps failing, as the Python client's does: it
// opens after `failures` consecutive tripping failures, or at once on DEADLINE_EXCEEDED
// (a hung server: one wait for the deadline is the most a caller pays). While it is open,
// calls fail at once without touching the network; a probe, on a goroutine of its own so
// that no caller waits for it, asks the service again after `reset` (doubling up to
// `maxReset` while it stays down), and the first probe that succeeds closes it.
type breaker struct {
	probe     func() bool
	threshold int
	reset     time.Duration
	maxReset  time.Duration

	mu          sync.Mutex
	consecutive int
	open        bool
	opened      int
	stop        chan struct{}
	stopOnce    sync.Once
}

func newBreaker(probe func() bool, failures int, reset, maxReset time.Duration) *breaker {
	if failures < 1 {
		failures = 1
	}
	return &breaker{probe: probe, threshold: failures, reset: reset, maxReset: maxReset, stop: make(chan struct{})}
}

func (b *breaker) allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.open
}

func (b *breaker) succeeded() {
	b.mu.Lock()
	b.consecutive = 0
	b.mu.Unlock()
}

func (b *breaker) failed(code codes.Code) {
	if !tripping[code] {
		return
	}
	b.mu.Lock()
	b.consecutive++
	trip := code == codes.DeadlineExceeded || b.consecutive >= b.threshold
	if !trip || b.open {
		b.mu.Unlock()
		return
	}
	b.open = true
	b.opened++
	b.mu.Unlock()
	go b.probing()
}

func (b *breaker) probing() {
	wait := b.reset
	for range maxProbes {
		timer := time.NewTimer(wait)
		select {
		case <-b.stop:
			timer.Stop()
			return
		case <-timer.C:
		}
		if b.probe() {
			b.mu.Lock()
			b.open = false
			b.consecutive = 0
			b.mu.Unlock()
			return
		}
		wait = min(wait*2, b.maxReset)
	}
}

func (b *breaker) close() {
	b.stopOnce.Do(func() { close(b.stop) })
}
