package dev.errorclass.client;

import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.grpc.StatusRuntimeException;
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The Java client under the shared failover harness (tests/clients/test_failover.py): JSON lines,
 * one request a line on stdin and one response a line on stdout (nothing else is written there:
 * gRPC's and everything else's output goes to stderr), driving one {@link ClassifierClient}.
 *
 * <p>Ops: {@code open}, {@code classify}, {@code load_bundle}, {@code refresh}, {@code flush},
 * {@code status}, {@code close} (EOF is a close), as the harness spells them. An
 * {@code open} that fetches the serving bundle waits for the start fetch (at most {@link
 * ClassifierClient#FIRST_CONNECT}) so that its reply names the bundle in use.
 *
 * <pre>
 * java -cp clients/java/target/classes:clients/java/target/test-classes:$(cat clients/java/target/test.classpath) \
 *     dev.errorclass.client.FailoverDriver
 * </pre>
 */
public final class FailoverDriver {
    private final PrintStream out;
    private ClassifierClient client;

    private FailoverDriver(PrintStream out) {
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err); // only the protocol's lines on stdout
        FailoverDriver driver = new FailoverDriver(protocol);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isBlank()) {
                continue;
            }
            JsonObject reply;
            boolean closing = false;
            try {
                JsonObject request = JsonParser.parseString(line).getAsJsonObject();
                String op = request.get("op").getAsString();
                closing = op.equals("close");
                reply = driver.handle(op, request);
            } catch (BundleException e) {
                reply = error(e.getMessage());
            } catch (StatusRuntimeException e) {
                reply = error(e.getStatus().getCode() + ": " + e.getStatus().getDescription());
            } catch (InvalidDescriptorException e) {
                reply = error("invalid_descriptor: " + e.getMessage());
            } catch (RuntimeException e) {
                reply = error("driver: " + e);
            }
            protocol.println(reply);
            if (closing) {
                System.exit(0);
            }
        }
        driver.close();
        System.exit(0);
    }

    private static JsonObject error(String message) {
        JsonObject o = new JsonObject();
        o.addProperty("error", message);
        return o;
    }

    private JsonObject handle(String op, JsonObject r) throws Exception {
        if (!op.equals("open") && !op.equals("close") && client == null) {
            return error("driver: open first");
        }
        return switch (op) {
            case "open" -> open(r);
            case "classify" -> classify(r);
            case "load_bundle" -> loadBundle(r);
            case "refresh" -> refresh();
            case "flush" -> {
                int n = client.flushDecisions();
                JsonObject o = ok();
                o.addProperty("reported", n);
                yield o;
            }
            case "status" -> status();
            case "close" -> {
                close();
                yield ok();
            }
            default -> error("driver: no such op " + op);
        };
    }

    private static JsonObject ok() {
        JsonObject o = new JsonObject();
        o.addProperty("ok", true);
        return o;
    }

    private static String text(JsonObject r, String key) {
        JsonElement v = r.get(key);
        return v == null || v.isJsonNull() ? null : v.getAsString();
    }

    private static Path path(JsonObject r, String key) {
        String v = text(r, key);
        return v == null || v.isEmpty() ? null : Path.of(v);
    }

    private JsonObject open(JsonObject r) throws Exception {
        if (client != null) {
            client.close();
            client = null;
        }
        ClassifierClient.Options o = ClassifierClient.Options.DEFAULTS;
        if (r.has("deadline_ms") && !r.get("deadline_ms").isJsonNull()) {
            o = o.withTimeout(Duration.ofMillis(r.get("deadline_ms").getAsLong()));
        }
        String mode = r.has("mode") && !r.get("mode").isJsonNull() ? r.get("mode").getAsString() : "remote";
        o = o.withMode(switch (mode) {
            case "remote" -> ClassifierClient.Mode.REMOTE;
            case "local_first" -> ClassifierClient.Mode.LOCAL_FIRST;
            default -> throw new IllegalArgumentException("mode: remote or local_first, not " + mode);
        });
        List<Path> keys = new ArrayList<>();
        if (r.has("trusted_keys") && r.get("trusted_keys").isJsonArray()) {
            for (JsonElement k : r.getAsJsonArray("trusted_keys")) {
                keys.add(Path.of(k.getAsString()));
            }
        }
        o = o.withTrustedKeyFiles(keys);
        o = o.withAllowUnsigned(r.has("allow_unsigned") && r.get("allow_unsigned").getAsBoolean());
        Path bundle = path(r, "bundle_file");
        if (bundle != null) {
            o = o.withBundleFile(bundle, path(r, "signatures_file"));
        }
        if (r.has("fetch_bundle") && !r.get("fetch_bundle").isJsonNull()) {
            o = o.withFetchBundle(r.get("fetch_bundle").getAsBoolean());
        }
        int batch = r.has("report_batch") && !r.get("report_batch").isJsonNull() ? r.get("report_batch").getAsInt()
                : ClassifierClient.Options.REPORT_BATCH;
        Duration interval = r.has("report_interval_ms") && !r.get("report_interval_ms").isJsonNull()
                ? Duration.ofMillis(r.get("report_interval_ms").getAsLong()) : ClassifierClient.Options.REPORT_INTERVAL;
        o = o.withReports(batch, interval, Math.max(ClassifierClient.Options.REPORT_QUEUE, batch));
        client = ClassifierClient.connect(text(r, "addr"), o);
        if (o.fetchesBundle()) {
            client.awaitBundleFetch(ClassifierClient.FIRST_CONNECT);
        }
        JsonObject reply = ok();
        reply.addProperty("bundle_digest", digest());
        return reply;
    }

    private String digest() {
        return client.bundle().map(Bundle::bundleDigest).orElse("");
    }

    private JsonObject classify(JsonObject r) {
        var descriptor = Spec.descriptor(r.getAsJsonObject("descriptor"));
        long start = System.nanoTime();
        Classification c = client.classify(descriptor);
        double ms = (System.nanoTime() - start) / 1e6;
        JsonObject reply = new JsonObject();
        if (c instanceof Classification.Classified a) {
            reply.add("answer", answer(a));
        } else {
            reply.addProperty("unclassified", true);
        }
        reply.addProperty("elapsed_ms", ms);
        return reply;
    }

    /** An answer in the protocol's spelling. */
    static JsonObject answer(Classification.Classified a) {
        JsonObject o = new JsonObject();
        o.addProperty("class", a.className());
        o.addProperty("action", a.action());
        int effect = a.response().getEffectValue();
        o.addProperty("effect", effect >= 0 && effect < Facts.EFFECT_NAMES.size() ? Facts.EFFECT_NAMES.get(effect) : String.valueOf(effect));
        o.addProperty("retryable", a.retryable());
        o.addProperty("rule_id", a.ruleId());
        o.addProperty("ruleset_version", a.rulesetVersion());
        o.addProperty("ruleset_digest", a.rulesetDigest());
        int reason = a.response().getUnknownReasonValue();
        o.addProperty("unknown_reason", reason > 0 && reason < Facts.UNKNOWN_REASON_NAMES.size() ? Facts.UNKNOWN_REASON_NAMES.get(reason) : "");
        o.addProperty("local", a.local());
        o.addProperty("bundle_digest", a.bundleDigest());
        if (a.retryAfter().isPresent()) {
            o.addProperty("retry_after_ms", a.retryAfter().get().toMillis());
        } else {
            o.add("retry_after_ms", JsonNull.INSTANCE);
        }
        o.addProperty("retry_after_source", a.retryAfterSource());
        return o;
    }

    private JsonObject loadBundle(JsonObject r) {
        try {
            client.loadBundle(path(r, "bundle_file"), path(r, "signatures_file"));
        } catch (BundleException e) {
            JsonObject reply = error(e.getMessage());
            reply.addProperty("bundle_digest", digest());
            return reply;
        }
        JsonObject reply = ok();
        reply.addProperty("bundle_digest", digest());
        return reply;
    }

    private JsonObject refresh() {
        JsonObject reply;
        try {
            boolean changed = client.refreshBundle();
            reply = ok();
            reply.addProperty("bundle_digest", digest());
            reply.addProperty("changed", changed);
        } catch (BundleException e) {
            reply = error(e.getMessage());
            reply.addProperty("bundle_digest", digest());
        } catch (StatusRuntimeException e) {
            reply = error(e.getStatus().getCode() + ": " + e.getStatus().getDescription());
            reply.addProperty("bundle_digest", digest());
        }
        return reply;
    }

    private JsonObject status() {
        JsonObject o = new JsonObject();
        o.addProperty("bundle_digest", digest());
        o.addProperty("pending", client.pendingDecisions());
        o.addProperty("reported", client.reportedDecisions());
        o.addProperty("dropped", client.droppedDecisions());
        o.addProperty("refusals", client.bundleRefusals());
        o.addProperty("last_refusal", client.lastBundleRefusal().map(BundleException::getMessage).orElse(""));
        return o;
    }

    private void close() {
        if (client != null) {
            client.close();
            client = null;
        }
    }
}
