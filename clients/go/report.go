package errorclass

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// Local-first decisions reach the service in batches (ReportDecisions), so its decision
// log, metrics and Unknown inbox still see every failure the runtime classified in
// process.

const (
	// DefaultReportBatch is how many pending decisions make a report at once.
	DefaultReportBatch = 100
	// DefaultReportInterval is the longest a decision waits for its report.
	DefaultReportInterval = time.Second
	// DefaultReportQueue is how many decisions wait at most; past it the oldest are dropped.
	DefaultReportQueue = 10_000
	// reportBytes bounds a report's size below the server's --max-request-bytes (4 MiB).
	reportBytes = 3 << 20
)

type pendingDecision struct {
	seq      uint64
	decision *errorclassv1.ReportedDecision
	size     int
}

// reporter queues decisions and sends them, oldest first, from one goroutine (and from
// Flush); a failed report stays queued and goes with the next.
type reporter struct {
	stub     errorclassv1.ErrorClassifierClient
	source   *bundleSource
	batch    int
	interval time.Duration
	capacity int
	timeout  time.Duration

	mu      sync.Mutex
	queue   []pendingDecision
	nextSeq uint64

	sending  sync.Mutex // one report in flight
	reported atomic.Int64
	dropped  atomic.Int64
	wake     chan struct{}
	done     chan struct{}
	stopped  chan struct{}
}

func newReporter(c *clientConfig, stub errorclassv1.ErrorClassifierClient, source *bundleSource, timeout time.Duration) *reporter {
	r := &reporter{
		stub: stub, source: source, batch: c.reportBatch, interval: c.reportInterval, capacity: c.reportQueue,
		timeout: max(timeout, fetchTimeout), wake: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{}),
	}
	go r.run()
	return r
}

// add queues a decision; when the queue is full the oldest is dropped.
func (r *reporter) add(d *errorclassv1.ExceptionDescriptor, answer *Answer, at time.Time) {
	// a copy: the caller may reuse its descriptor before the report goes
	descriptor := proto.CloneOf(utf8Descriptor(d))
	decision := &errorclassv1.ReportedDecision{
		Descriptor_: descriptor, Answer: answer.ClassifyResponse, BundleDigest: answer.BundleDigest,
		DecidedAt: timestamppb.New(at),
	}
	r.mu.Lock()
	if len(r.queue) >= r.capacity {
		drop := len(r.queue) - r.capacity + 1
		r.forget(drop)
		r.dropped.Add(int64(drop))
	}
	r.nextSeq++
	r.queue = append(r.queue, pendingDecision{seq: r.nextSeq, decision: decision, size: proto.Size(decision)})
	full := len(r.queue) >= r.batch
	r.mu.Unlock()
	if full {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// forget removes the n oldest decisions (r.mu held): the slice moves on, and append
// copies the live ones when it grows, so neither costs a copy of the queue.
func (r *reporter) forget(n int) {
	clear(r.queue[:n])
	r.queue = r.queue[n:]
}

func (r *reporter) pending() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.queue))
}

// run reports when a batch is pending or the interval has passed.
func (r *reporter) run() {
	defer close(r.stopped)
	ticker := time.NewTicker(r.interval)
	defer ticker.Stop()
	for {
		select {
		case <-r.done:
			return
		case <-r.wake:
		case <-ticker.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
		_, _ = r.flush(ctx)
		cancel()
	}
}

// flush reports every decision pending now, in reports of at most MaxBatch decisions
// and reportBytes: how many the service took, and the first failure (the decisions of a
// failed report stay queued, for the next).
func (r *reporter) flush(ctx context.Context) (int, error) {
	r.sending.Lock()
	defer r.sending.Unlock()
	sent := 0
	for {
		r.mu.Lock()
		var batch []pendingDecision
		size := 0
		for _, p := range r.queue {
			if len(batch) == MaxBatch || (len(batch) > 0 && size+p.size > reportBytes) {
				break
			}
			batch = append(batch, p)
			size += p.size + 4
		}
		r.mu.Unlock()
		if len(batch) == 0 {
			return sent, nil
		}
		request := &errorclassv1.ReportDecisionsRequest{Decisions: make([]*errorclassv1.ReportedDecision, len(batch))}
		for i, p := range batch {
			request.Decisions[i] = p.decision
		}
		got, err := r.stub.ReportDecisions(ctx, request)
		if err != nil && status.Code(err) != codes.InvalidArgument {
			return sent, fmt.Errorf("errorclass: ReportDecisions: %w", err)
		}
		last := batch[len(batch)-1].seq
		r.mu.Lock()
		taken := 0
		for taken < len(r.queue) && r.queue[taken].seq <= last {
			taken++
		}
		r.forget(taken)
		r.mu.Unlock()
		if err != nil { // malformed: the client's bug; sending it again cannot help
			r.dropped.Add(int64(taken))
			return sent, fmt.Errorf("errorclass: ReportDecisions refused %d decisions: %w", taken, err)
		}
		r.reported.Add(int64(taken))
		sent += taken
		r.source.stale("", got.GetBundleDigest())
	}
}

// close stops the background reports and flushes what is pending, within ctx.
func (r *reporter) close(ctx context.Context) error {
	close(r.done)
	<-r.stopped
	_, err := r.flush(ctx)
	return err
}
