// Command failoverdriver drives the Go client for the shared failover test
// (tests/clients/test_failover.py): one JSON request a line on stdin, one JSON response
// a line on stdout, nothing else on stdout (logs go to stderr). The protocol is the
// spec's (clients/spec/README.md, "The failover driver"): open, classify, load_bundle,
// refresh, flush, status, close; EOF is close.
//
//	cd clients/go && go build -o /tmp/failover-driver ./internal/failoverdriver
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	errorclass "github.com/errorclass/classifier/clients/go"
	"github.com/errorclass/classifier/clients/go/internal/vectorjson"
)

type request struct {
	Op               string         `json:"op"`
	Addr             string         `json:"addr"`
	Mode             string         `json:"mode"`
	DeadlineMS       *int           `json:"deadline_ms"`
	BundleFile       *string        `json:"bundle_file"`
	SignaturesFile   *string        `json:"signatures_file"`
	TrustedKeys      []string       `json:"trusted_keys"`
	AllowUnsigned    bool           `json:"allow_unsigned"`
	FetchBundle      *bool          `json:"fetch_bundle"`
	ReportBatch      *int           `json:"report_batch"`
	ReportIntervalMS *int           `json:"report_interval_ms"`
	Descriptor       map[string]any `json:"descriptor"`
}

type reply map[string]any

func main() {
	d := &driver{}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var r request
		var answer reply
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			answer = reply{"error": "bad_request: " + err.Error()}
		} else {
			answer = d.handle(r)
		}
		if err := out.Encode(answer); err != nil {
			fmt.Fprintln(os.Stderr, "failoverdriver: stdout:", err)
			os.Exit(1)
		}
		if r.Op == "close" {
			return
		}
	}
	if err := in.Err(); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "failoverdriver: stdin:", err)
	}
	d.close() // EOF is close
}

type driver struct {
	client *errorclass.Client
}

func (d *driver) handle(r request) reply {
	if r.Op != "open" && r.Op != "close" && d.client == nil {
		return reply{"error": "not_open: open first"}
	}
	switch r.Op {
	case "open":
		return d.open(r)
	case "classify":
		return d.classify(r)
	case "load_bundle":
		_, err := d.client.LoadBundle(text(r.BundleFile), text(r.SignaturesFile))
		if err != nil {
			return reply{"error": describe(err), "bundle_digest": d.digest()}
		}
		return reply{"ok": true, "bundle_digest": d.digest()}
	case "refresh":
		changed, err := d.client.RefreshBundle(context.Background())
		if err != nil {
			return reply{"error": describe(err), "bundle_digest": d.digest()}
		}
		return reply{"ok": true, "bundle_digest": d.digest(), "changed": changed}
	case "flush":
		n, err := d.client.Flush(context.Background())
		if err != nil {
			return reply{"error": describe(err)}
		}
		return reply{"ok": true, "reported": n}
	case "status":
		s := d.client.BundleStatus()
		last := ""
		if s.LastRefusal != nil {
			last = describe(s.LastRefusal)
		}
		return reply{
			"bundle_digest": s.BundleDigest, "pending": s.Pending, "reported": s.Reported, "dropped": s.Dropped,
			"refusals": s.Refusals, "last_refusal": last,
		}
	case "close":
		if err := d.close(); err != nil {
			fmt.Fprintln(os.Stderr, "failoverdriver: close:", err)
		}
		return reply{"ok": true}
	}
	return reply{"error": "bad_request: unknown op " + r.Op}
}

func (d *driver) open(r request) reply {
	if d.client != nil {
		return reply{"error": "bad_request: already open"}
	}
	opts := []errorclass.ClientOption{}
	if r.DeadlineMS != nil {
		opts = append(opts, errorclass.WithTimeout(time.Duration(*r.DeadlineMS)*time.Millisecond))
	}
	if r.BundleFile != nil {
		opts = append(opts, errorclass.WithBundleFile(*r.BundleFile, text(r.SignaturesFile)))
	}
	if len(r.TrustedKeys) > 0 {
		opts = append(opts, errorclass.WithBundleKeyFiles(r.TrustedKeys...))
	}
	if r.AllowUnsigned {
		opts = append(opts, errorclass.WithUnsignedBundles())
	}
	if r.FetchBundle != nil {
		opts = append(opts, errorclass.WithBundleFetch(*r.FetchBundle))
	}
	switch r.Mode {
	case "", "remote":
	case "local_first":
		opts = append(opts, errorclass.WithLocalFirst())
	default:
		return reply{"error": "bad_request: mode " + r.Mode + " is neither remote nor local_first"}
	}
	var batch, interval int
	if r.ReportBatch != nil {
		batch = *r.ReportBatch
	}
	if r.ReportIntervalMS != nil {
		interval = *r.ReportIntervalMS
	}
	opts = append(opts, errorclass.WithReports(batch, time.Duration(interval)*time.Millisecond, 0))
	client, err := errorclass.NewClient(r.Addr, opts...)
	if err != nil {
		return reply{"error": describe(err)}
	}
	d.client = client
	return reply{"ok": true, "bundle_digest": d.digest()}
}

func (d *driver) classify(r request) reply {
	descriptor, err := vectorjson.Descriptor(r.Descriptor)
	if err != nil {
		return reply{"error": "bad_request: descriptor: " + err.Error()}
	}
	started := time.Now()
	answer, err := d.client.ClassifyDescriptor(context.Background(), descriptor)
	elapsed := float64(time.Since(started).Microseconds()) / 1000
	var unclassified *errorclass.Unclassified
	switch {
	case errors.As(err, &unclassified):
		return reply{"unclassified": true, "elapsed_ms": elapsed}
	case err != nil:
		return reply{"error": describe(err), "elapsed_ms": elapsed}
	}
	var wait any
	if w, ok := answer.RetryAfter(); ok {
		wait = w.Milliseconds()
	}
	return reply{"answer": reply{
		"class": answer.ClassName, "action": answer.GetAction().GetId(), "effect": answer.EffectName(),
		"retryable": answer.Retryable, "rule_id": answer.RuleId, "ruleset_version": answer.RulesetVersion,
		"ruleset_digest": answer.RulesetDigest, "unknown_reason": answer.UnknownReasonName(), "local": answer.Local,
		"bundle_digest": answer.BundleDigest, "retry_after_ms": wait, "retry_after_source": answer.RetryAfterSource,
	}, "elapsed_ms": elapsed}
}

func (d *driver) digest() string {
	if b := d.client.Bundle(); b != nil {
		return b.BundleDigest
	}
	return ""
}

func (d *driver) close() error {
	if d.client == nil {
		return nil
	}
	err := d.client.Close()
	d.client = nil
	return err
}

// describe is an error as the protocol spells it: a bundle's stable code first.
func describe(err error) string {
	var refused *errorclass.BundleError
	if errors.As(err, &refused) {
		return refused.Code + ": " + refused.Message
	}
	return err.Error()
}

func text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
