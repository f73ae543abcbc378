package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	errorclass "github.com/errorclass/classifier/clients/go"
	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

// overGRPC times the Classify call of each descriptor, rounds times over them after a
// warm-up, against ERRORCLASS_BENCH_ADDR's server or one started here.
func overGRPC(descriptors []*errorclassv1.ExceptionDescriptor, rounds int) ([]time.Duration, error) {
	addr := os.Getenv("ERRORCLASS_BENCH_ADDR")
	if addr == "" {
		server, started, err := startServer()
		if err != nil {
			return nil, err
		}
		defer server()
		addr = started
	}
	client, err := errorclass.NewClient(addr, errorclass.WithTimeout(5*time.Second), errorclass.WithoutBreaker(), errorclass.WithAttempts(1))
	if err != nil {
		return nil, err
	}
	defer client.Close()
	ctx := context.Background()
	for _, d := range descriptors[:min(len(descriptors), 500)] { // connect and warm up
		if _, err := client.ClassifyDescriptor(ctx, d); err != nil {
			return nil, fmt.Errorf("gRPC Classify at %s: %w", addr, err)
		}
	}
	samples := make([]time.Duration, 0, rounds*len(descriptors))
	for range rounds {
		for _, d := range descriptors {
			begin := time.Now()
			_, err := client.ClassifyDescriptor(ctx, d)
			samples = append(samples, time.Since(begin))
			if err != nil {
				return nil, fmt.Errorf("gRPC Classify at %s: %w", addr, err)
			}
		}
	}
	return samples, nil
}

// startServer starts `classifier serve` (the repository's venv) on the bundled library at
// a free loopback port and waits until it answers (a minute and a half at most): its
// address, and how to stop it (by its pid).
func startServer() (func(), string, error) {
	classifier, err := filepath.Abs(filepath.Join("..", "..", ".venv", "bin", "classifier"))
	if err != nil {
		return nil, "", err
	}
	if _, err := os.Stat(classifier); err != nil {
		return nil, "", fmt.Errorf("no server to call: set ERRORCLASS_BENCH_ADDR, or run `make setup` for %s", classifier)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	addr := listener.Addr().String()
	_ = listener.Close()
	cmd := exec.Command(classifier, "serve", "--rules", filepath.Join("..", "..", "rules"), "--addr", addr, "--no-watch")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	client, err := errorclass.NewClient(addr, errorclass.WithTimeout(time.Second), errorclass.WithoutBreaker())
	if err != nil {
		stop()
		return nil, "", err
	}
	defer client.Close()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := client.Stub().GetRuleset(ctx, &errorclassv1.GetRulesetRequest{})
		cancel()
		if err == nil {
			return stop, addr, nil
		}
		select {
		case <-exited:
			return nil, "", errors.New("classifier serve exited before it answered")
		default:
		}
		if time.Now().After(deadline) {
			stop()
			return nil, "", fmt.Errorf("classifier serve at %s did not answer: %w", addr, err)
		}
	}
}
