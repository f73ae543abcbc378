package errorclass

// The client's bundle against a real `classifier serve` (the repository's venv, `make
// setup`) on a loopback port: one server for the package's tests, serving a copy of the
// bundled library signed with the spec's TEST key a and writing a decision log. It is
// started by the first test that needs it and killed, by its pid, after the last.

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

type realServer struct {
	addr      string
	rules     string
	decisions string
	log       string
	cmd       *exec.Cmd
	conn      *grpc.ClientConn
	stub      errorclassv1.ErrorClassifierClient
	dir       string
}

var (
	shared     *realServer
	sharedErr  error
	sharedOnce sync.Once
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.stop()
	}
	os.Exit(code)
}

func keyPath(name string) string { return filepath.Join(specDir(), "keys", name) }

// service is the shared server, started on first use (a minute at most).
func service(t *testing.T) *realServer {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = startServer() })
	if sharedErr != nil {
		t.Fatalf("classifier serve: %v", sharedErr)
	}
	return shared
}

func startServer() (*realServer, error) {
	classifier, err := filepath.Abs(filepath.Join("..", "..", ".venv", "bin", "classifier"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(classifier); err != nil {
		return nil, fmt.Errorf("%s: %w (run `make setup` at the repository's root)", classifier, err)
	}
	dir, err := os.MkdirTemp("", "errorclass-go-")
	if err != nil {
		return nil, err
	}
	s := &realServer{dir: dir, rules: filepath.Join(dir, "rules"), decisions: filepath.Join(dir, "decisions.jsonl"), log: filepath.Join(dir, "serve.log")}
	if err := os.CopyFS(s.rules, os.DirFS(filepath.Join("..", "..", "rules"))); err != nil {
		return nil, err
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.addr = listener.Addr().String()
	_ = listener.Close()
	logFile, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	key, err := filepath.Abs(keyPath("TEST-ONLY-a.key"))
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(classifier, "serve", "--rules", s.rules, "--addr", s.addr, "--no-watch",
		"--bundle-key", key, "--decision-log", s.decisions)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	dieWithTest(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	if s.conn, err = grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		s.stop()
		return nil, err
	}
	s.stub = errorclassv1.NewErrorClassifierClient(s.conn)
	for deadline := time.Now().Add(90 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := s.stub.GetRuleset(ctx, &errorclassv1.GetRulesetRequest{})
		cancel()
		if err == nil {
			return s, nil
		}
		if s.cmd.ProcessState != nil || time.Now().After(deadline) {
			out, _ := os.ReadFile(s.log)
			s.stop()
			return nil, fmt.Errorf("not serving on %s: %v\n%s", s.addr, err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (s *realServer) stop() {
	if s.conn != nil {
		_ = s.conn.Close()
	}
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
	}
	_ = os.RemoveAll(s.dir)
}

// served is the server's bundle now.
func (s *realServer) served(t *testing.T) *errorclassv1.GetBundleResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := s.stub.GetBundle(ctx, &errorclassv1.GetBundleRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// decisionLines are the decision log's lines now.
func (s *realServer) decisionLines(t *testing.T) []map[string]any {
	t.Helper()
	file, err := os.Open(s.decisions)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var out []map[string]any
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 16<<20)
	for scanner.Scan() {
		var line map[string]any
		if json.Unmarshal(scanner.Bytes(), &line) == nil {
			out = append(out, line)
		}
	}
	return out
}

// waitFor polls until ok, at most within.
func waitFor(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// bundleFiles writes the served bundle as files: as signed, tampered (one byte of the
// version changed), unsigned, and signed only by TEST key c (a key no test trusts).
func bundleFiles(t *testing.T, got *errorclassv1.GetBundleResponse) map[string]string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tampered := append([]byte(nil), got.Bundle...)
	at := strings.Index(string(tampered), `"version"`)
	tampered[at+12] ^= 1
	keyPEM, err := os.ReadFile(keyPath("TEST-ONLY-c.key"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(keyPEM)
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	private := parsed.(ed25519.PrivateKey)
	signatures, _ := json.Marshal(map[string]any{
		"format": "errorclass-bundle-signatures", "format_version": 1,
		"signatures": []map[string]string{{
			"key_id": KeyID(private.Public().(ed25519.PublicKey)), "algorithm": "ed25519",
			"signature": base64.StdEncoding.EncodeToString(ed25519.Sign(private, got.Bundle)),
		}},
	})
	out := map[string]string{
		"good": write("good.json", got.Bundle), "tampered": write("tampered.json", tampered),
		"unsigned": write("unsigned.json", got.Bundle), "unknown": write("unknown.json", got.Bundle),
	}
	write("good.json.sig.json", got.Signatures)
	write("tampered.json.sig.json", got.Signatures)
	write("unknown.json.sig.json", signatures)
	return out
}

// sampleDescriptors are library cases spread over the library's vectors, and the
// library's vectors with retry evidence (the wait must come back the same).
func sampleDescriptors(t *testing.T) []*errorclassv1.ExceptionDescriptor {
	t.Helper()
	var out []*errorclassv1.ExceptionDescriptor
	cases := readVectorFile(t, filepath.Join(specDir(), "vectors", "bundle.library.json")).Vectors
	for i := 0; i < len(cases) && len(out) < 40; i += len(cases) / 40 {
		if _, padded := cases[i].Input["pad"]; !padded {
			out = append(out, descriptorFromVector(t, cases[i].Input["descriptor"]))
		}
	}
	for _, v := range readVectorFile(t, filepath.Join(specDir(), "vectors", "bundle.json")).Vectors {
		if _, waits := v.Want["retry_after"]; waits && v.Input["bundle"] == "library" {
			out = append(out, descriptorFromVector(t, v.Input["descriptor"]))
		}
	}
	return out
}

func trusted() ClientOption { return WithBundleKeyFiles(keyPath("TEST-ONLY-a.pub")) }

func TestWhenTheServiceCannotAnswerTheBundleAnswersAsItWould(t *testing.T) {
	s := service(t)
	online := newClient(t, s.addr, trusted(), WithTimeout(5*time.Second))
	if changed, err := online.RefreshBundle(context.Background()); err != nil || online.Bundle() == nil {
		t.Fatalf("RefreshBundle: changed %v, %v", changed, err)
	}
	got := s.served(t)
	if online.Bundle().BundleDigest != got.BundleDigest {
		t.Fatalf("the client holds %s, the server serves %s", online.Bundle().BundleDigest, got.BundleDigest)
	}
	files := bundleFiles(t, got)
	descriptors := sampleDescriptors(t)
	var remote []*Answer
	waits := 0
	for _, d := range descriptors {
		answer, err := online.ClassifyDescriptor(context.Background(), d)
		if err != nil || answer.Local {
			t.Fatalf("%s: the server is up: %v, local %v", d.Type, err, answer != nil && answer.Local)
		}
		if _, ok := answer.RetryAfter(); ok {
			waits++
		}
		remote = append(remote, answer)
	}
	if waits < 8 {
		t.Fatalf("%d of the server's answers say how long to wait, want the 8 evidence vectors' at least", waits)
	}
	// A client whose service is gone, started from the file of the served bundle.
	deadline := 300 * time.Millisecond
	offline := newClient(t, closedPort(t), trusted(), WithBundleFile(files["good"], ""), WithBundleFetch(false), WithTimeout(deadline))
	slowest := time.Duration(0)
	for i, d := range descriptors {
		started := time.Now()
		answer, err := offline.ClassifyDescriptor(context.Background(), d)
		slowest = max(slowest, time.Since(started))
		if err != nil {
			t.Fatalf("%s: %v", d.Type, err)
		}
		if !answer.Local || answer.BundleDigest != got.BundleDigest {
			t.Fatalf("%s: local %v, bundle %s", d.Type, answer.Local, answer.BundleDigest)
		}
		if !proto.Equal(answer.ClassifyResponse, remote[i].ClassifyResponse) {
			t.Errorf("%s: the bundle answers\n%v\nthe server answered\n%v", d.Type, answer.ClassifyResponse, remote[i].ClassifyResponse)
		}
	}
	if slowest > deadline+50*time.Millisecond {
		t.Errorf("a local answer took %s, past the deadline of %s", slowest, deadline)
	}
	if _, err := offline.ClassifyDescriptor(context.Background(), descriptors[0]); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d answers from the bundle equal to the server's; slowest %s (deadline %s)", len(descriptors), slowest, deadline)
	// No bundle: Unclassified, as before.
	bare := newClient(t, closedPort(t), WithTimeout(deadline))
	var unclassified *Unclassified
	if _, err := bare.ClassifyDescriptor(context.Background(), descriptors[0]); !errors.As(err, &unclassified) {
		t.Fatalf("without a bundle: %v, want *Unclassified", err)
	}
}

func TestARefusedBundleIsRecordedAndTheOneInUseStays(t *testing.T) {
	s := service(t)
	got := s.served(t)
	files := bundleFiles(t, got)
	if err := second(NewClient(s.addr, trusted(), WithBundleFile(files["tampered"], ""))); refusal(t, err) != BundleBadSignature {
		t.Fatalf("a tampered start file: %v", err)
	}
	if err := second(NewClient(s.addr, WithBundleFile(files["good"], ""))); refusal(t, err) != BundleUnsigned {
		t.Fatalf("a start file with no trusted key and unsigned not allowed: %v", err)
	}
	client := newClient(t, s.addr, trusted(), WithBundleFile(files["good"], ""), WithBundleFetch(false))
	for _, c := range []struct{ file, code string }{
		{"tampered", BundleBadSignature}, {"unsigned", BundleUnsigned}, {"unknown", BundleUnknownKey},
	} {
		if _, err := client.LoadBundle(files[c.file], ""); refusal(t, err) != c.code {
			t.Errorf("%s: %v, want %s", c.file, err, c.code)
		}
		if digest := client.Bundle().BundleDigest; digest != got.BundleDigest {
			t.Fatalf("%s refused, the bundle in use is %s, not %s", c.file, digest, got.BundleDigest)
		}
	}
	status := client.BundleStatus()
	if status.Refusals != 3 || status.LastRefusal == nil || status.LastRefusal.Code != BundleUnknownKey {
		t.Fatalf("status after 3 refusals: %+v", status)
	}
	// The service's bundle, signed by a key this client does not trust: refused too.
	other := newClient(t, s.addr, WithBundleKeyFiles(keyPath("TEST-ONLY-b.pub")), WithBundleFetch(false))
	if _, err := other.RefreshBundle(context.Background()); refusal(t, err) != BundleUnknownKey {
		t.Fatalf("a bundle signed by an untrusted key: %v", err)
	}
	if other.Bundle() != nil || other.BundleStatus().Refusals != 1 {
		t.Fatalf("the refused bundle is in use (%v), refusals %d", other.Bundle(), other.BundleStatus().Refusals)
	}
	// Unsigned allowed, without keys: used unverified.
	loose := newClient(t, s.addr, WithUnsignedBundles(), WithBundleFile(files["unsigned"], ""), WithBundleFetch(false))
	if loose.Bundle() == nil || len(loose.Bundle().KeyIDs) != 0 {
		t.Fatalf("an unsigned bundle with unsigned allowed: %v", loose.Bundle())
	}
}

func TestARefreshAsksIfNoneMatchAndAnUnchangedBundleCostsNoBytes(t *testing.T) {
	s := service(t)
	var answers []*errorclassv1.GetBundleResponse
	var asked []string
	var mu sync.Mutex
	watch := grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if r, ok := req.(*errorclassv1.GetBundleRequest); ok && err == nil {
			mu.Lock()
			asked, answers = append(asked, r.IfNoneMatch), append(answers, reply.(*errorclassv1.GetBundleResponse))
			mu.Unlock()
		}
		return err
	})
	client := newClient(t, s.addr, trusted(), WithBundleFetch(false), WithGRPCOptions(watch), WithTimeout(5*time.Second))
	if changed, err := client.RefreshBundle(context.Background()); err != nil || !changed {
		t.Fatalf("the first refresh: changed %v, %v", changed, err)
	}
	if changed, err := client.RefreshBundle(context.Background()); err != nil || changed {
		t.Fatalf("the second refresh: changed %v, %v", changed, err)
	}
	mu.Lock()
	defer mu.Unlock()
	digest := client.Bundle().BundleDigest
	if len(asked) != 2 || asked[0] != "" || asked[1] != digest {
		t.Fatalf("if_none_match sent: %q, want \"\" then %s", asked, digest)
	}
	if !answers[1].Unchanged || len(answers[1].Bundle) != 0 {
		t.Fatalf("the second answer: unchanged %v, %d bytes", answers[1].Unchanged, len(answers[1].Bundle))
	}
	// Fetching on its own: at start, in the background, never delaying a classification.
	auto := newClient(t, s.addr, trusted(), WithTimeout(5*time.Second))
	waitFor(t, 20*time.Second, "the bundle fetched at start", func() bool { return auto.Bundle() != nil })
}

func TestLocalFirstClassifiesInProcessAndReportsInBatches(t *testing.T) {
	s := service(t)
	files := bundleFiles(t, s.served(t))
	before := len(s.decisionLines(t))
	client := newClient(t, s.addr, trusted(), WithBundleFile(files["good"], ""), WithLocalFirst(),
		WithReports(10, 200*time.Millisecond, 0), WithTimeout(5*time.Second))
	descriptors := sampleDescriptors(t)[30:55] // cases, and answers with a wait
	var classes []string
	waits := 0
	for _, d := range descriptors {
		answer, err := client.ClassifyDescriptor(context.Background(), d)
		if err != nil || !answer.Local {
			t.Fatalf("%s: %v (local-first answers from the bundle)", d.Type, err)
		}
		classes = append(classes, answer.ClassName)
		if _, ok := answer.RetryAfter(); ok {
			waits++
		}
	}
	if waits == 0 {
		t.Fatal("no local answer says how long to wait: the sample has no retry evidence")
	}
	// The background reports them: a batch at 10, the rest when 200 ms have passed.
	waitFor(t, 10*time.Second, "every decision reported", func() bool { return client.BundleStatus().Reported == 25 })
	if status := client.BundleStatus(); status.Pending != 0 || status.Dropped != 0 {
		t.Fatalf("after the reports: %+v", status)
	}
	var local []map[string]any
	waitFor(t, 10*time.Second, "the decisions in the decision log", func() bool {
		local = local[:0]
		for _, line := range s.decisionLines(t)[before:] {
			if line["local"] == true {
				local = append(local, line)
			}
		}
		return len(local) >= len(descriptors)
	})
	for i, line := range local {
		answer, _ := line["answer"].(map[string]any)
		if line["bundle_digest"] != client.Bundle().BundleDigest || answer["class"] != classes[i] {
			t.Fatalf("decision %d in the log: %v, want class %s from %s", i, line, classes[i], client.Bundle().BundleDigest)
		}
	}
}

func TestLocalFirstKeepsWhatItCouldNotReportAndDropsTheOldestWhenFull(t *testing.T) {
	s := service(t)
	files := bundleFiles(t, s.served(t))
	// No service: the reports fail and stay pending; past the queue's 5 the oldest go.
	client := newClient(t, closedPort(t), trusted(), WithBundleFile(files["good"], ""), WithLocalFirst(),
		WithReports(1000, time.Hour, 5), WithTimeout(300*time.Millisecond), WithBundleFetch(false))
	descriptors := sampleDescriptors(t)[:8]
	for _, d := range descriptors {
		if answer, err := client.ClassifyDescriptor(context.Background(), d); err != nil || !answer.Local {
			t.Fatalf("%s: %v", d.Type, err)
		}
	}
	if n, err := client.Flush(context.Background()); err == nil || n != 0 {
		t.Fatalf("a flush with no service: %d reported, %v", n, err)
	}
	if status := client.BundleStatus(); status.Pending != 5 || status.Dropped != 3 || status.Reported != 0 {
		t.Fatalf("after 8 decisions in a queue of 5 and a failed report: %+v", status)
	}
	// Without a bundle yet, local-first asks the service.
	early := newClient(t, s.addr, trusted(), WithLocalFirst(), WithBundleFetch(false), WithTimeout(5*time.Second))
	if answer, err := early.ClassifyDescriptor(context.Background(), descriptors[0]); err != nil || answer.Local {
		t.Fatalf("local-first without a bundle: %v, local %v", err, answer != nil && answer.Local)
	}
}

func TestAFailedFetchWaitsBeforeTheNext(t *testing.T) {
	var fetches atomic.Int64
	count := grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if _, ok := req.(*errorclassv1.GetBundleRequest); ok {
			fetches.Add(1)
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
	client := newClient(t, closedPort(t), trusted(), WithGRPCOptions(count), WithTimeout(200*time.Millisecond))
	waitFor(t, 10*time.Second, "the fetch at start, failed", func() bool {
		client.source.mu.Lock()
		defer client.source.mu.Unlock()
		return fetches.Load() == 1 && !client.source.notBefore.IsZero()
	})
	for range 20 { // answers naming another ruleset, a moment after the failure
		client.source.stale("sha256:another", "")
		time.Sleep(10 * time.Millisecond)
	}
	if n := fetches.Load(); n != 1 {
		t.Fatalf("%d fetches within the wait after a failed one, want 1", n)
	}
	if _, err := client.RefreshBundle(context.Background()); err == nil || fetches.Load() != 2 {
		t.Fatalf("an explicit refresh is not held back: %v, %d fetches", err, fetches.Load())
	}
}

// Last: it changes the shared server's rules (every other test reads the served bundle
// when it starts, so the order does not matter to them).
func TestANewRulesetNamedByTheServiceIsFetched(t *testing.T) {
	s := service(t)
	remote := newClient(t, s.addr, trusted(), WithTimeout(5*time.Second))
	reporting := newClient(t, s.addr, trusted(), WithLocalFirst(), WithReports(1000, time.Hour, 0), WithTimeout(5*time.Second))
	for _, c := range []*Client{remote, reporting} {
		if _, err := c.RefreshBundle(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	old := s.served(t).BundleDigest
	manifest := filepath.Join(s.rules, "ruleset.yaml")
	text, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^version: .*$`).FindString(string(text))
	renamed := strings.Replace(string(text), line, "version: 9.9.9-go", 1)
	if line == "" {
		t.Fatalf("%s has no version line", manifest)
	}
	if err := os.WriteFile(manifest, []byte(renamed), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the server's reload", func() bool { return s.served(t).BundleDigest != old })
	renewed := s.served(t).BundleDigest
	d := sampleDescriptors(t)[0]
	// An answer names the new ruleset: the remote client fetches its bundle.
	waitFor(t, 20*time.Second, "the remote client's new bundle", func() bool {
		_, _ = remote.ClassifyDescriptor(context.Background(), d)
		return remote.Bundle().BundleDigest == renewed
	})
	// A report's answer names the new bundle: the local-first client fetches it.
	waitFor(t, 20*time.Second, "the local-first client's new bundle", func() bool {
		_, _ = reporting.ClassifyDescriptor(context.Background(), d)
		_, _ = reporting.Flush(context.Background())
		return reporting.Bundle().BundleDigest == renewed
	})
}
