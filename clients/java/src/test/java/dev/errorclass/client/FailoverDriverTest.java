package dev.errorclass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.errorclass.v1.ErrorClassifierGrpc;
import dev.errorclass.v1.GetBundleRequest;
import dev.errorclass.v1.GetBundleResponse;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The failover driver as the shared harness runs it: a JVM of its own speaking JSON lines, every
 * line of its stdout a reply, against the shared real server ({@link LiveServer}) and a port
 * nothing listens on. (The harness, tests/clients/test_failover.py, kills and restarts a server
 * under it; this checks the protocol and the ops.)
 */
class FailoverDriverTest {
    @TempDir
    Path tmp;

    private static final class Driver implements AutoCloseable {
        final Process process;
        final Writer in;
        final BufferedReader out;

        Driver() throws Exception {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            process = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    "-Derrorclass.spec.dir=" + Spec.dir(), FailoverDriver.class.getName())
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        }

        JsonObject ask(String request) throws Exception {
            in.write(request + "\n");
            in.flush();
            String line = out.readLine();
            if (line == null) {
                throw new AssertionError("the driver ended before answering " + request);
            }
            return JsonParser.parseString(line).getAsJsonObject(); // anything but one JSON object a line fails here
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }

    private static String open(String addr, String extra) {
        return "{\"op\":\"open\",\"addr\":\"" + addr + "\",\"mode\":\"remote\",\"deadline_ms\":500,\"trusted_keys\":[\""
                + LiveServer.key("TEST-ONLY-a.pub") + "\"],\"allow_unsigned\":false,\"report_batch\":100,\"report_interval_ms\":1000"
                + extra + "}";
    }

    @Test
    void theDriverSpeaksTheProtocol() throws Exception {
        LiveServer server = LiveServer.get();
        GetBundleResponse served;
        ManagedChannel channel = ManagedChannelBuilder.forTarget(server.address).usePlaintext().build();
        try {
            served = ErrorClassifierGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                    .getBundle(GetBundleRequest.getDefaultInstance());
        } finally {
            channel.shutdownNow();
        }
        Path bundle = tmp.resolve("served.json");
        Files.write(bundle, served.getBundle().toByteArray());
        Files.write(tmp.resolve("served.json.sig.json"), served.getSignatures().toByteArray());
        Path tampered = tmp.resolve("tampered.json");
        byte[] bytes = served.getBundle().toByteArray();
        bytes[bytes.length / 3] ^= 1;
        Files.write(tampered, bytes);
        String descriptor = "{\"type\":\"openai.RateLimitError\",\"http_status\":429,\"origin\":\"provider\",\"provider\":\"openai\","
                + "\"attributes\":{\"http.response.header.retry-after-ms\":\"1500\"}}";

        try (Driver d = new Driver()) {
            JsonObject opened = d.ask(open(server.address, ",\"fetch_bundle\":true,\"bundle_file\":null,\"signatures_file\":null"));
            assertEquals(served.getBundleDigest(), opened.get("bundle_digest").getAsString(), opened.toString());

            JsonObject remote = d.ask("{\"op\":\"classify\",\"descriptor\":" + descriptor + "}").getAsJsonObject("answer");
            assertFalse(remote.get("local").getAsBoolean());
            assertEquals("", remote.get("bundle_digest").getAsString());
            assertEquals(1500, remote.get("retry_after_ms").getAsLong());
            assertEquals(RetryAfter.RETRY_AFTER_MS, remote.get("retry_after_source").getAsString());

            JsonObject refused = d.ask("{\"op\":\"load_bundle\",\"bundle_file\":\"" + tampered + "\",\"signatures_file\":\""
                    + tmp.resolve("served.json.sig.json") + "\"}");
            assertTrue(refused.get("error").getAsString().startsWith("bad_signature: "), refused.toString());
            assertEquals(served.getBundleDigest(), refused.get("bundle_digest").getAsString(), "the bundle in use stays");
            JsonObject status = d.ask("{\"op\":\"status\"}");
            assertEquals(1, status.get("refusals").getAsInt());
            assertTrue(status.get("last_refusal").getAsString().startsWith("bad_signature: "));
            JsonObject refreshed = d.ask("{\"op\":\"refresh\"}");
            assertTrue(refreshed.get("ok").getAsBoolean(), refreshed.toString());
            assertFalse(refreshed.get("changed").getAsBoolean());

            String down = "127.0.0.1:" + Outage.stoppedPort();
            JsonObject reopened = d.ask(open(down, ",\"fetch_bundle\":false,\"bundle_file\":\"" + bundle + "\",\"signatures_file\":null"));
            assertEquals(served.getBundleDigest(), reopened.get("bundle_digest").getAsString(), reopened.toString());
            JsonObject local = d.ask("{\"op\":\"classify\",\"descriptor\":" + descriptor + "}");
            JsonObject answer = local.getAsJsonObject("answer");
            assertTrue(answer.get("local").getAsBoolean());
            assertEquals(served.getBundleDigest(), answer.get("bundle_digest").getAsString());
            for (String field : new String[] {"class", "action", "effect", "retryable", "rule_id", "ruleset_version", "ruleset_digest",
                    "unknown_reason", "retry_after_ms", "retry_after_source"}) {
                assertEquals(remote.get(field), answer.get(field), field + ": as the service answered");
            }
            assertTrue(local.get("elapsed_ms").getAsDouble() < 500, local.toString());
            assertEquals(1, d.ask("{\"op\":\"status\"}").get("pending").getAsInt());
            assertTrue(d.ask("{\"op\":\"flush\"}").has("error"), "the service is down");

            JsonObject wrongKey = d.ask("{\"op\":\"open\",\"addr\":\"" + down + "\",\"trusted_keys\":[\""
                    + LiveServer.key("TEST-ONLY-c.pub") + "\"],\"bundle_file\":\"" + bundle + "\"}");
            assertTrue(wrongKey.get("error").getAsString().startsWith("unknown_key: "), wrongKey.toString());

            JsonObject none = d.ask("{\"op\":\"open\",\"addr\":\"" + down + "\",\"deadline_ms\":200,\"trusted_keys\":[]}");
            assertEquals("", none.get("bundle_digest").getAsString());
            assertTrue(d.ask("{\"op\":\"classify\",\"descriptor\":" + descriptor + "}").get("unclassified").getAsBoolean());
            assertTrue(d.ask("{\"op\":\"close\"}").get("ok").getAsBoolean());
            assertTrue(d.process.waitFor(10, TimeUnit.SECONDS), "the driver exits after close");
            assertEquals(0, d.process.exitValue());
            assertEquals(null, d.out.readLine(), "nothing else on stdout");
        }
    }
}
