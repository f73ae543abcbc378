package dev.errorclass.client;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.errorclass.v1.ClassifyRequest;
import dev.errorclass.v1.ErrorClassifierGrpc;
import dev.errorclass.v1.ExceptionDescriptor;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The in-process evaluator on the bundled library ({@code make bench}; figures, not a test): the
 * descriptors of clients/spec/vectors/bundle.library.json (the library's cases, the public
 * corpus, the conformance suite's SDK types), each classified by clients/spec/bundles/library.json
 * after a warm-up, every evaluation timed alone; prints p50, p90, p99 and p99.9 per evaluation,
 * and per descriptor the best of its passes (what it costs when the scheduler does not interrupt).
 * Beside it, in the same run, the same descriptors sent one by one to a real {@code classifier
 * serve} with the Classify call (the one $ERRORCLASS_BENCH_ADDR names, else one started here from
 * the repository's .venv and stopped after), each call timed alone. The last line is the summary
 * every client's benchmark prints: {@code bench java: in-process p50 X us p99 Y us; grpc p50 A us
 * p99 B us (N descriptors, R rounds)}, R the in-process rounds (the gRPC rounds are on the line
 * before).
 * {@code java -cp ... dev.errorclass.client.BundleBench [passes [grpc-rounds]]}.
 */
public final class BundleBench {
    private BundleBench() {}

    public static void main(String[] args) throws Exception {
        int passes = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int grpcRounds = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        Path spec = Spec.dir();
        long t0 = System.nanoTime();
        Bundle bundle = Bundle.load(spec.resolve("bundles").resolve("library.json"));
        long loadNanos = System.nanoTime() - t0;
        List<ExceptionDescriptor> descriptors = new ArrayList<>();
        for (String file : new String[] {"bundle.library.json"}) {
            JsonObject data = Spec.read(spec.resolve("vectors").resolve(file));
            for (JsonElement v : data.getAsJsonArray("vectors")) {
                descriptors.add(BundleVectors.descriptor(v.getAsJsonObject().getAsJsonObject("input")));
            }
        }
        int sink = 0;
        long warm = System.nanoTime();
        while (System.nanoTime() - warm < 2_000_000_000L) { // JIT warm-up: 2 s
            for (ExceptionDescriptor d : descriptors) {
                sink += bundle.classify(d).classNumber();
            }
        }
        long[] samples = new long[descriptors.size() * passes];
        long[] best = new long[descriptors.size()];
        Arrays.fill(best, Long.MAX_VALUE);
        long[] bestOf = new long[descriptors.size()];
        int i = 0;
        long start = System.nanoTime();
        for (int p = 0; p < passes; p++) {
            for (int k = 0; k < descriptors.size(); k++) {
                long a = System.nanoTime();
                sink += bundle.classify(descriptors.get(k)).classNumber();
                long took = System.nanoTime() - a;
                samples[i++] = took;
                best[k] = Math.min(best[k], took);
            }
        }
        long total = System.nanoTime() - start;
        System.arraycopy(best, 0, bestOf, 0, best.length);
        slowest(descriptors, bestOf, Integer.getInteger("errorclass.bench.slowest", 0));
        Arrays.sort(samples);
        Arrays.sort(best);
        System.out.printf(Locale.ROOT, "java bundle evaluator: %s (%d rules), loaded in %.0f ms; %d descriptors x %d passes%n",
                bundle.digest().substring(0, 19), bundle.ruleCount(), loadNanos / 1e6, descriptors.size(), passes);
        System.out.printf(Locale.ROOT, "java bundle evaluator: per evaluation  p50 %.2f us  p90 %.2f us  p99 %.2f us  p99.9 %.2f us  mean %.2f us%n",
                at(samples, 0.50), at(samples, 0.90), at(samples, 0.99), at(samples, 0.999), total / 1e3 / samples.length);
        System.out.printf(Locale.ROOT, "java bundle evaluator: per descriptor, best of %d passes (the machine's noise left out)  p50 %.2f us  p99 %.2f us  max %.2f us (checksum %d)%n",
                passes, at(best, 0.50), at(best, 0.99), best[best.length - 1] / 1e3, sink);
        long[] calls = grpcRounds > 0 ? grpc(descriptors, grpcRounds) : new long[] {0}; // 0 rounds: no server
        System.out.printf(Locale.ROOT, "java gRPC Classify (loopback, one call at a time): %d calls (%d rounds), p50 %.2f us  p99 %.2f us  max %.2f us%n",
                calls.length, grpcRounds, at(calls, 0.50), at(calls, 0.99), calls[calls.length - 1] / 1e3);
        System.out.printf(Locale.ROOT, "java %s, %d processors, load average %s%n", System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors(), loadAverage());
        System.out.printf(Locale.ROOT, "bench java: in-process p50 %.2f us p99 %.2f us; grpc p50 %.2f us p99 %.2f us (%d descriptors, %d rounds)%n",
                at(samples, 0.50), at(samples, 0.99), at(calls, 0.50), at(calls, 0.99), descriptors.size(), passes);
    }

    /** Every descriptor's Classify call to a real server, {@code rounds} times after a warm-up, each timed alone (sorted nanoseconds). */
    private static long[] grpc(List<ExceptionDescriptor> descriptors, int rounds) throws Exception {
        String addr = System.getenv("ERRORCLASS_BENCH_ADDR");
        LiveServer started = null;
        if (addr == null || addr.isEmpty()) {
            started = LiveServer.plain();
            addr = started.address;
        }
        ManagedChannel channel = ManagedChannelBuilder.forTarget(addr).usePlaintext().build();
        try {
            ErrorClassifierGrpc.ErrorClassifierBlockingStub stub = ErrorClassifierGrpc.newBlockingStub(channel);
            for (int i = 0; i < Math.min(500, descriptors.size()); i++) { // warm-up: the JVM's gRPC path and the server's
                send(stub, descriptors.get(i));
            }
            long[] samples = new long[descriptors.size() * rounds];
            int i = 0;
            for (int r = 0; r < rounds; r++) {
                for (ExceptionDescriptor d : descriptors) {
                    long a = System.nanoTime();
                    send(stub, d);
                    samples[i++] = System.nanoTime() - a;
                }
            }
            Arrays.sort(samples);
            return samples;
        } finally {
            channel.shutdownNow();
            if (started != null) {
                started.stop();
            }
        }
    }

    /** The {@code n} slowest descriptors by their best pass (-Derrorclass.bench.slowest=n), to see where the tail is. */
    private static void slowest(List<ExceptionDescriptor> descriptors, long[] best, int n) {
        Integer[] order = new Integer[best.length];
        for (int k = 0; k < order.length; k++) {
            order[k] = k;
        }
        Arrays.sort(order, (a, b) -> Long.compare(best[b], best[a]));
        for (int k = 0; k < Math.min(n, order.length); k++) {
            ExceptionDescriptor d = descriptors.get(order[k]);
            String message = d.getMessage().replace("\n", " ");
            System.out.printf(Locale.ROOT, "slow %.2f us  %s  %s%n", best[order[k]] / 1e3, d.getType(),
                    message.length() > 120 ? message.substring(0, 120) + "..." : message);
        }
    }

    private static String loadAverage() {
        try {
            return java.nio.file.Files.readString(Path.of("/proc/loadavg")).strip();
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }

    private static void send(ErrorClassifierGrpc.ErrorClassifierBlockingStub stub, ExceptionDescriptor d) {
        stub.withDeadlineAfter(10, TimeUnit.SECONDS).classify(ClassifyRequest.newBuilder().setDescriptor(d).build());
    }

    private static double at(long[] sorted, double q) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1)] / 1e3;
    }
}
