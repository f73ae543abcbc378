package dev.errorclass.client;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One real {@code classifier serve} (the repository's .venv, or the program
 * $ERRORCLASS_CLASSIFIER names) on 127.0.0.1, shared by every test of the JVM that needs the
 * service: started on first use, serving the repository's rules with a bundle signed by the TEST
 * key {@code TEST-ONLY-a} and a decision log, and killed (by its pid) when the JVM ends. One
 * start, a few seconds, for the whole suite.
 */
final class LiveServer {
    private static LiveServer shared;

    final Process process;
    final String address;
    final Path decisionLog;
    final Path dir;

    private LiveServer(Process process, String address, Path decisionLog, Path dir) {
        this.process = process;
        this.address = address;
        this.decisionLog = decisionLog;
        this.dir = dir;
    }

    /** The shared server, started on first use. */
    static synchronized LiveServer get() throws IOException, InterruptedException {
        if (shared == null || !shared.process.isAlive()) {
            shared = start();
            LiveServer s = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(s::stop));
        }
        return shared;
    }

    static Path root() {
        return Spec.dir().resolve("../..").normalize();
    }

    static Path classifier() {
        String named = System.getenv("ERRORCLASS_CLASSIFIER");
        Path p = named != null && !named.isEmpty() ? Path.of(named) : root().resolve(".venv/bin/classifier");
        if (!Files.isExecutable(p)) {
            throw new AssertionError(p + " is not there: run `make setup` (these tests need a real classifier serve)");
        }
        return p;
    }

    /** A TEST key file of clients/spec/keys ({@code TEST-ONLY-a.key}, {@code .pub}). */
    static Path key(String file) {
        return Spec.dir().resolve("keys").resolve(file);
    }

    private static LiveServer start() throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("errorclass-java-live");
        Path log = dir.resolve("decisions.jsonl");
        return start(dir, log, List.of("--bundle-key", key("TEST-ONLY-a.key").toString(), "--decision-log", log.toString()));
    }

    /** A server of its own (the caller stops it): the repository's rules, nothing else (the benchmark's). */
    static LiveServer plain() throws IOException, InterruptedException {
        return start(Files.createTempDirectory("errorclass-java-live"), null, List.of());
    }

    private static LiveServer start(Path dir, Path log, List<String> flags) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(classifier().toString(), "serve", "--rules", root().resolve("rules").toString(),
                "--addr", "127.0.0.1:0", "--no-watch"));
        command.addAll(flags);
        Process p = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        BlockingQueue<String> started = new ArrayBlockingQueue<>(1);
        StringBuilder said = new StringBuilder();
        Thread reader = new Thread(() -> {
            try (BufferedReader err = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = err.readLine()) != null; ) {
                    synchronized (said) {
                        if (said.length() < 4000) {
                            said.append(line).append('\n');
                        }
                    }
                    if (line.startsWith("{") && line.contains("\"start\"")) {
                        JsonObject o = JsonParser.parseString(line).getAsJsonObject();
                        if (o.get("event").getAsString().equals("start")) {
                            started.offer(o.get("address").getAsString());
                        }
                    }
                }
            } catch (IOException | RuntimeException e) {
                // the server is gone
            }
        }, "classifier-serve-stderr");
        reader.setDaemon(true);
        reader.start();
        String address = started.poll(60, TimeUnit.SECONDS);
        if (address == null) {
            p.destroyForcibly();
            synchronized (said) {
                throw new AssertionError("classifier serve did not start within 60 s: " + said);
            }
        }
        return new LiveServer(p, address, log, dir);
    }

    /** The decision log's lines so far. */
    List<JsonObject> decisions() throws IOException {
        List<JsonObject> out = new ArrayList<>();
        if (decisionLog != null && Files.exists(decisionLog)) {
            for (String line : Files.readAllLines(decisionLog, StandardCharsets.UTF_8)) {
                if (!line.isBlank()) {
                    out.add(JsonParser.parseString(line).getAsJsonObject());
                }
            }
        }
        return out;
    }

    void stop() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
        }
    }
}
