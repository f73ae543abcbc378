package dev.errorclass.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.errorclass.client.Descriptors;
import dev.errorclass.v1.Cause;
import dev.errorclass.v1.ExceptionDescriptor;
import dev.errorclass.v1.Origin;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The Java side of the conformance suite: real SDK calls against the fake provider, each
 * failure described with {@link Descriptors#from} and printed as the descriptor-file shape.
 *
 * <pre>
 *   java -cp ... dev.errorclass.conformance.Worker          one JSON request per stdin line, one answer per stdout line
 *   java -cp ... dev.errorclass.conformance.Worker --list   the drivers and the APIs each can call, as JSON
 * </pre>
 *
 * A request is {"sdk", "base", "scenario": {"id", "api", "stream", "fault", "request"}}; the
 * answer {"sdk", "id", "outcome": "error" | "response" | "driver_error", "descriptor", "chain"},
 * as tests/conformance/node/worker.mjs answers. Calls run one at a time.
 */
public final class Worker {
    static final ObjectMapper JSON = new ObjectMapper();
    /** A driver that neither returns nor times out by then is a driver bug. */
    static final long CALL_LIMIT_MS = 15_000;

    /** One real SDK call for a scenario; returns what the call returned (an HTTP error response, or null). */
    interface Driver {
        Object call(Call call) throws Exception;
    }

    /** What a driver gets: the scenario's base URL, api, stream, fault and request hints. */
    record Call(String base, String id, String api, boolean stream, String fault, JsonNode request) {
        String hint(String key, String otherwise) {
            JsonNode v = request == null ? null : request.get(key);
            return v == null || v.isNull() ? otherwise : v.asText();
        }
    }

    record Entry(List<String> apis, Driver driver) {}

    static final Map<String, Entry> DRIVERS = new LinkedHashMap<>();

    static {
        Drivers.register(DRIVERS);
    }

    /** A raw client's HTTP error response, with the body it read. */
    record HttpAnswer(Object response, String body) {}

    /** How a call that returned normally ended: the finish or stop reason as the API spells it. */
    record Finished(String reason, String model) {}

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
        if (List.of(args).contains("--list")) {
            ObjectNode list = JSON.createObjectNode();
            DRIVERS.forEach((name, e) -> {
                ArrayNode apis = list.putArray(name);
                e.apis().forEach(apis::add);
            });
            out.println(JSON.writeValueAsString(list));
            return;
        }
        // SDK logging and warnings go to stderr, never into the answers.
        System.setOut(System.err);
        ExecutorService calls = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "driver-call");
            t.setDaemon(true);
            return t;
        });
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode answer;
            try {
                answer = handle(JSON.readTree(line), calls);
            } catch (Exception e) {
                answer = JSON.createObjectNode();
                answer.put("outcome", "driver_error");
                answer.putNull("descriptor");
                answer.set("chain", chain(e));
            }
            out.println(JSON.writeValueAsString(answer));
        }
        calls.shutdownNow();
    }

    static ObjectNode handle(JsonNode request, ExecutorService calls) throws Exception {
        String sdk = request.path("sdk").asText();
        JsonNode s = request.path("scenario");
        ObjectNode answer = JSON.createObjectNode();
        answer.put("sdk", sdk);
        answer.put("id", s.path("id").asText());
        Entry entry = DRIVERS.get(sdk);
        if (entry == null) {
            answer.put("outcome", "driver_error");
            answer.putNull("descriptor");
            answer.set("chain", chain(new IllegalArgumentException("no driver " + sdk)));
            return answer;
        }
        String api = s.path("api").asText();
        Call call = new Call(request.path("base").asText(), s.path("id").asText(), api,
                s.path("stream").asBoolean(false), s.path("fault").isNull() ? null : s.path("fault").asText(), s.get("request"));
        Future<Object> running = calls.submit(() -> entry.driver().call(call));
        try {
            Object value = running.get(CALL_LIMIT_MS, TimeUnit.MILLISECONDS);
            answer.put("outcome", "response");
            ExceptionDescriptor d = null;
            if (value instanceof HttpAnswer h) {
                d = Descriptors.fromHttpResponse(h.response(), h.body(), Origin.ORIGIN_PROVIDER, api);
            } else if (value instanceof Finished f) {
                d = Descriptors.fromFinishReason(f.reason(), api, false, f.model());
            }
            answer.set("descriptor", d == null ? JSON.nullNode() : descriptorJson(d));
            answer.set("chain", JSON.createArrayNode());
        } catch (TimeoutException e) {
            running.cancel(true);
            answer.put("outcome", "driver_error");
            answer.putNull("descriptor");
            answer.set("chain", chain(new IllegalStateException("driver " + sdk + " did not settle in " + CALL_LIMIT_MS + " ms")));
        } catch (ExecutionException e) {
            Throwable raised = e.getCause();
            answer.put("outcome", "error");
            answer.set("descriptor", descriptorJson(Descriptors.from(raised, Origin.ORIGIN_PROVIDER, api)));
            answer.set("chain", chain(raised));
        }
        return answer;
    }

    /** The descriptor in the descriptor-file shape classifier.descriptor_from_data reads. */
    static ObjectNode descriptorJson(ExceptionDescriptor d) {
        ObjectNode o = JSON.createObjectNode();
        o.put("type", d.getType());
        ArrayNode supers = o.putArray("supertypes");
        d.getSupertypesList().forEach(supers::add);
        if (d.hasHttpStatus()) {
            o.put("http_status", d.getHttpStatus());
        }
        if (d.hasGrpcStatus()) {
            o.put("grpc_status", d.getGrpcStatus());
        }
        o.put("origin", d.getOrigin().name().substring("ORIGIN_".length()).toLowerCase(Locale.ROOT));
        if (!d.getCode().isEmpty()) {
            o.put("code", d.getCode());
        }
        o.put("message", d.getMessage());
        o.put("language", d.getLanguage());
        o.put("provider", d.getProvider());
        if (d.getAttributesCount() > 0) {
            ObjectNode a = o.putObject("attributes");
            d.getAttributesMap().forEach(a::put);
        }
        ArrayNode causes = o.putArray("causes");
        for (Cause c : d.getCausesList()) {
            ObjectNode co = causes.addObject();
            co.put("type", c.getType());
            ArrayNode cs = co.putArray("supertypes");
            c.getSupertypesList().forEach(cs::add);
            if (c.hasHttpStatus()) {
                co.put("http_status", c.getHttpStatus());
            }
            if (c.hasGrpcStatus()) {
                co.put("grpc_status", c.getGrpcStatus());
            }
            if (!c.getCode().isEmpty()) {
                co.put("code", c.getCode());
            }
            co.put("message", c.getMessage());
        }
        return o;
    }

    /** The raised chain, for reports: class and message per level. */
    static ArrayNode chain(Throwable error) {
        ArrayNode out = JSON.createArrayNode();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = error; t != null && seen.add(t) && out.size() < 8; t = t.getCause()) {
            ObjectNode level = out.addObject();
            level.put("class", t.getClass().getName());
            String m = String.valueOf(t.getMessage());
            level.put("message", m.length() > 200 ? m.substring(0, 200) : m);
        }
        return out;
    }

    static List<String> apis(String... names) {
        return new ArrayList<>(List.of(names));
    }

    private Worker() {}
}
