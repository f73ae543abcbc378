package errorclass

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// The client's bundle: where it comes from (a file shipped with the runtime, then the
// service's GetBundle), which keys it must be signed by, and what happens to one that is
// not (refused, recorded, and the bundle in use stays in use).

const (
	// fetchRetry is how long after a failed or refused fetch the next may start, doubling
	// up to fetchRetryMax: a service that keeps failing is not asked for its bundle on
	// every answer.
	fetchRetry    = 2 * time.Second
	fetchRetryMax = 30 * time.Second
	// fetchTimeout bounds a fetch in the background (it delays no classification).
	fetchTimeout = 10 * time.Second
	// maxBundleBytes is what a GetBundle answer may be (gRPC's default refuses past 4 MiB;
	// a ruleset of several thousand long rules has a larger bundle).
	maxBundleBytes = 64 << 20
)

// bundleSource holds the bundle in use and verifies every new one against the trusted
// keys before it is swapped in. Safe for concurrent use.
type bundleSource struct {
	keys          []ed25519.PublicKey
	allowUnsigned bool
	fetch         bool
	stub          errorclassv1.ErrorClassifierClient

	current  atomic.Pointer[Bundle]
	refusals atomic.Int64

	mu          sync.Mutex // guards the fields below
	lastRefusal *BundleError
	notBefore   time.Time // no fetch in the background before then
	backoff     time.Duration

	fetching sync.Mutex // held by the one fetch in flight
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

func newBundleSource(c *clientConfig, stub errorclassv1.ErrorClassifierClient) (*bundleSource, error) {
	s := &bundleSource{allowUnsigned: c.allowUnsigned, fetch: c.fetchBundle(), stub: stub}
	for _, path := range c.keyFiles {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, &BundleError{Code: BundleUnreadableFile, Message: err.Error(), Err: err}
		}
		c.keys = append(c.keys, data)
	}
	for _, pem := range c.keys {
		key, err := ParsePublicKey(pem)
		if err != nil {
			return nil, err
		}
		s.keys = append(s.keys, key)
	}
	if len(s.keys) == 0 && !s.allowUnsigned {
		return nil, bundleError(BundleUnsigned, "no trusted key to verify a bundle with (WithBundleKeys, "+
			"WithBundleKeyFiles), and unsigned bundles are not allowed (WithUnsignedBundles)")
	}
	if c.bundleFile != "" {
		b, err := s.read(c.bundleFile, c.signaturesFile)
		if err != nil {
			return nil, err
		}
		s.current.Store(b)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// read loads a bundle file and its signatures (path.sig.json unless given; none is
// unsigned), verified with the trusted keys.
func (s *bundleSource) read(path, signaturesPath string) (*Bundle, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &BundleError{Code: BundleUnreadableFile, Message: err.Error(), Err: err}
	}
	sigPath := signaturesPath
	if sigPath == "" {
		sigPath = path + ".sig.json"
	}
	signatures, err := os.ReadFile(sigPath)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) && signaturesPath == "":
		signatures = nil // none beside it: unsigned
	default:
		return nil, &BundleError{Code: BundleUnreadableFile, Message: err.Error(), Err: err}
	}
	return s.parse(data, signatures)
}

// parse verifies (with trusted keys) and compiles a bundle; a bundle the evaluator
// cannot read, or a newer format, is BundleInvalid to the caller as it is.
func (s *bundleSource) parse(data, signatures []byte) (*Bundle, error) {
	var keyIDs []string
	if len(s.keys) > 0 {
		var err error
		if keyIDs, err = VerifyBundle(data, signatures, s.keys); err != nil {
			return nil, err
		}
	}
	b, err := compileBundle(data)
	if err != nil {
		return nil, err
	}
	b.KeyIDs = keyIDs
	return b, nil
}

// bundle is the bundle in use, or nil.
func (s *bundleSource) bundle() *Bundle {
	if s == nil {
		return nil
	}
	return s.current.Load()
}

// refused records a bundle this client would not use.
func (s *bundleSource) refused(err error) {
	var refusal *BundleError
	if !errors.As(err, &refusal) {
		refusal = &BundleError{Code: BundleInvalid, Message: err.Error(), Err: err}
	}
	s.refusals.Add(1)
	s.mu.Lock()
	s.lastRefusal = refusal
	s.mu.Unlock()
}

// load swaps in the bundle of a file once it verifies; a refusal is recorded and the
// bundle in use stays in use.
func (s *bundleSource) load(path, signaturesPath string) (*Bundle, error) {
	b, err := s.read(path, signaturesPath)
	if err != nil {
		s.refused(err)
		return nil, err
	}
	s.current.Store(b)
	return b, nil
}

// refresh asks the service for its bundle now (if_none_match: the one in use) and swaps
// it in once it verifies: whether the bundle in use changed. One fetch at a time: a
// caller waits for the one in flight.
func (s *bundleSource) refresh(ctx context.Context) (bool, error) {
	s.fetching.Lock()
	defer s.fetching.Unlock()
	return s.fetchNow(ctx)
}

func (s *bundleSource) fetchNow(ctx context.Context) (bool, error) {
	held := s.bundle()
	request := &errorclassv1.GetBundleRequest{}
	if held != nil {
		request.IfNoneMatch = held.BundleDigest
	}
	got, err := s.stub.GetBundle(ctx, request, grpc.MaxCallRecvMsgSize(maxBundleBytes))
	if err != nil {
		s.failed()
		return false, fmt.Errorf("errorclass: GetBundle: %w", err)
	}
	if got.GetUnchanged() || (held != nil && got.GetBundleDigest() == held.BundleDigest) {
		s.succeeded()
		return false, nil
	}
	var signatures []byte
	if len(got.GetSignatures()) > 0 {
		signatures = got.GetSignatures()
	}
	b, err := s.parse(got.GetBundle(), signatures)
	if err != nil {
		s.refused(err)
		s.failed()
		return false, err
	}
	s.current.Store(b)
	s.succeeded()
	return true, nil
}

func (s *bundleSource) failed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backoff = min(max(s.backoff*2, fetchRetry), fetchRetryMax)
	s.notBefore = time.Now().Add(s.backoff)
}

func (s *bundleSource) succeeded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backoff, s.notBefore = 0, time.Time{}
}

// stale fetches in the background when the service names a ruleset (an answer's
// ruleset digest) or a bundle (a report's answer) other than the one in use, unless a
// fetch is in flight or the last one failed a moment ago.
func (s *bundleSource) stale(rulesetDigest, bundleDigest string) {
	if s == nil || !s.fetch {
		return
	}
	held := s.bundle()
	switch {
	case held == nil:
	case rulesetDigest != "" && rulesetDigest != held.Digest:
	case bundleDigest != "" && bundleDigest != held.BundleDigest:
	default:
		return
	}
	s.background()
}

// background starts a fetch unless one is in flight or the last failed too recently.
func (s *bundleSource) background() {
	s.mu.Lock()
	wait := time.Now().Before(s.notBefore)
	s.mu.Unlock()
	if wait || s.ctx.Err() != nil || !s.fetching.TryLock() {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.fetching.Unlock()
		ctx, cancel := context.WithTimeout(s.ctx, fetchTimeout)
		defer cancel()
		_, _ = s.fetchNow(ctx)
	}()
}

// close stops a fetch in flight and waits for it.
func (s *bundleSource) close() {
	if s == nil {
		return
	}
	s.cancel()
	s.wg.Wait()
}

// BundleStatus is what the client's bundle and its reports are: for a health page or
// a log line.
type BundleStatus struct {
	// BundleDigest is the bundle in use ("" when none is loaded yet).
	BundleDigest string
	// Refusals counts the bundles refused (a start file's refusal is NewClient's error);
	// LastRefusal is the latest, with its stable Code.
	Refusals    int64
	LastRefusal *BundleError
	// Pending, Reported and Dropped count local-first decisions: waiting to be reported,
	// reported (the service took them), and dropped (the queue was full: the oldest go;
	// or the service refused a report as malformed).
	Pending, Reported, Dropped int64
}
