// Command bench measures the Go client's bundle evaluator in process, and beside it, in
// the same run, the gRPC Classify call of the same descriptors against a real local
// server (a benchmark, not a test: it prints figures, `make bench` runs it):
//
//	cd clients/go && go run ./internal/bench [-rounds 20] [-grpc-rounds 1] [-bundle FILE] [-vectors FILE]
//
// It loads the bundled library's bundle (clients/spec/bundles/library.json) and
// classifies the descriptors of the library's bundle vectors (its cases, the public
// corpus, the conformance suite's SDK types: what runtimes send), each call timed on its
// own, the clock's cost included, over several rounds after one to warm up; it prints
// the percentiles per evaluation, the cost of loading the bundle, and the machine's load,
// since these machines are shared. The server is ERRORCLASS_BENCH_ADDR's when set, else
// one it starts (the repository's .venv/bin/classifier serving the bundled library on a
// free loopback port) and stops. The last line is the summary every client's benchmark
// prints: `bench go: in-process p50 X us p99 Y us; grpc p50 A us p99 B us (N descriptors,
// R rounds)`.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	errorclass "github.com/errorclass/classifier/clients/go"
	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
	"github.com/errorclass/classifier/clients/go/internal/vectorjson"
)

func main() {
	bundlePath := flag.String("bundle", "../spec/bundles/library.json", "the bundle to evaluate")
	vectorsPath := flag.String("vectors", "../spec/vectors/bundle.library.json", "bundle vectors whose descriptors are classified")
	rounds := flag.Int("rounds", 20, "rounds over the descriptors (after one to warm up)")
	grpcRounds := flag.Int("grpc-rounds", 1, "rounds of gRPC Classify calls over the descriptors (0: none)")
	slowest := flag.Int("slowest", 0, "also print the descriptors slowest at their median")
	flag.Parse()
	if err := run(*bundlePath, *vectorsPath, *rounds, *grpcRounds, *slowest); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(bundlePath, vectorsPath string, rounds, grpcRounds, slowest int) error {
	data, err := os.ReadFile(bundlePath)
	if err != nil {
		return err
	}
	started := time.Now()
	bundle, err := errorclass.ParseBundle(data)
	if err != nil {
		return err
	}
	loaded := time.Since(started)
	descriptors, err := readDescriptors(vectorsPath)
	if err != nil {
		return err
	}
	for _, d := range descriptors { // warm up, and check every descriptor is classified
		if _, err := bundle.Classify(d); err != nil {
			return fmt.Errorf("%s: %w", d.GetType(), err)
		}
	}
	samples := make([]time.Duration, 0, rounds*len(descriptors))
	for range rounds {
		for _, d := range descriptors {
			begin := time.Now()
			_, _ = bundle.Classify(d)
			samples = append(samples, time.Since(begin))
		}
	}
	medians := perDescriptor(descriptors, samples, rounds)
	if slowest > 0 {
		printSlowest(descriptors, medians, slowest)
	}
	byMedian := slices.Sorted(slices.Values(medians))
	slices.Sort(samples)
	at := func(q float64) time.Duration { return samples[min(len(samples)-1, int(q*float64(len(samples))))] }
	clock := clockCost()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("go bundle evaluator: %s (%d rules, ruleset %s %s), loaded and indexed in %.1f ms\n",
		bundlePath, bundle.Rules, bundle.Name, bundle.Version, float64(loaded.Microseconds())/1000)
	fmt.Printf("  %d descriptors x %d rounds = %d evaluations, each timed (a clock reading costs %d ns)\n",
		len(descriptors), rounds, len(samples), clock.Nanoseconds())
	fmt.Printf("  per evaluation: p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		us(at(0.50)), us(at(0.90)), us(at(0.99)), us(at(0.999)), us(samples[len(samples)-1]))
	fmt.Printf("  per descriptor, the median of its %d rounds (what the machine's other load leaves out): p50 %s  p99 %s  max %s\n",
		rounds, us(byMedian[len(byMedian)/2]), us(byMedian[len(byMedian)*99/100]), us(byMedian[len(byMedian)-1]))
	fmt.Printf("  %s, GOMAXPROCS %d, load average %s\n", runtime.Version(), runtime.GOMAXPROCS(0), strings.TrimSpace(string(load)))
	summary := fmt.Sprintf("bench go: in-process p50 %.2f us p99 %.2f us", micro(at(0.50)), micro(at(0.99)))
	if grpcRounds > 0 {
		calls, err := overGRPC(descriptors, grpcRounds)
		if err != nil {
			return err
		}
		slices.Sort(calls)
		call := func(q float64) time.Duration { return calls[min(len(calls)-1, int(q*float64(len(calls))))] }
		fmt.Printf("  gRPC Classify (the client's ClassifyDescriptor, loopback): %d calls, p50 %s  p99 %s  max %s\n",
			len(calls), us(call(0.50)), us(call(0.99)), us(calls[len(calls)-1]))
		summary += fmt.Sprintf("; grpc p50 %.2f us p99 %.2f us", micro(call(0.50)), micro(call(0.99)))
	}
	fmt.Printf("%s (%d descriptors, %d rounds)\n", summary, len(descriptors), rounds)
	return nil
}

func micro(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

// perDescriptor is each descriptor's median evaluation over the rounds.
func perDescriptor(descriptors []*errorclassv1.ExceptionDescriptor, samples []time.Duration, rounds int) []time.Duration {
	medians := make([]time.Duration, len(descriptors))
	own := make([]time.Duration, rounds)
	for i := range descriptors {
		for r := range rounds {
			own[r] = samples[r*len(descriptors)+i]
		}
		slices.Sort(own)
		medians[i] = own[rounds/2]
	}
	return medians
}

// printSlowest prints the descriptors whose median evaluation is the slowest.
func printSlowest(descriptors []*errorclassv1.ExceptionDescriptor, medians []time.Duration, n int) {
	order := make([]int, len(descriptors))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return int(medians[b] - medians[a]) })
	for _, i := range order[:min(n, len(order))] {
		d := descriptors[i]
		fmt.Printf("  slow: %q median %s (%d supertypes, %d causes, %d message bytes)\n",
			d.GetType(), us(medians[i]), len(d.GetSupertypes()), len(d.GetCauses()), len(d.GetMessage()))
	}
}

func us(d time.Duration) string { return fmt.Sprintf("%.2f us", float64(d.Nanoseconds())/1000) }

// clockCost is the median cost of the time.Now/time.Since pair around each call.
func clockCost() time.Duration {
	costs := make([]time.Duration, 10001)
	for i := range costs {
		begin := time.Now()
		costs[i] = time.Since(begin)
	}
	slices.Sort(costs)
	return costs[len(costs)/2]
}

// readDescriptors are the descriptors of a bundle vector file's vectors of the library
// bundle, spelt as the spec spells them (origin by name, @PAD@ expanded).
func readDescriptors(path string) ([]*errorclassv1.ExceptionDescriptor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var file struct {
		Vectors []struct {
			Name  string `json:"name"`
			Input struct {
				Bundle     string         `json:"bundle"`
				Descriptor map[string]any `json:"descriptor"`
				Pad        *struct {
					Text  string `json:"text"`
					Count int    `json:"count"`
				} `json:"pad"`
			} `json:"input"`
		} `json:"vectors"`
	}
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	if err := decoder.Decode(&file); err != nil {
		return nil, err
	}
	var out []*errorclassv1.ExceptionDescriptor
	for _, v := range file.Vectors {
		if v.Input.Bundle != "library" {
			continue
		}
		d, err := vectorjson.Descriptor(v.Input.Descriptor)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.Name, err)
		}
		if pad := v.Input.Pad; pad != nil {
			expand := strings.Repeat(pad.Text, pad.Count)
			d.Message = strings.Replace(d.Message, "@PAD@", expand, 1)
			for _, c := range d.Causes {
				c.Message = strings.Replace(c.Message, "@PAD@", expand, 1)
			}
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no vector of the library bundle", path)
	}
	return out, nil
}
