package dev.errorclass.client;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import dev.errorclass.v1.Cause;
import dev.errorclass.v1.ExceptionDescriptor;
import dev.errorclass.v1.Origin;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * clients/spec as the tests read it: where it is (the environment variable
 * ERRORCLASS_SPEC_DIR, else the repository's clients/spec), its vector files, and a descriptor
 * spelt as the vectors spell it (the proto's field names, empty fields left out, origin by
 * name, statuses by number).
 */
final class Spec {
    private Spec() {}

    /** The spec's folder. */
    static Path dir() {
        String env = System.getenv("ERRORCLASS_SPEC_DIR");
        if (env != null && !env.isBlank()) {
            return Path.of(env);
        }
        return Path.of(System.getProperty("errorclass.spec.dir", "../spec"));
    }

    /** Every vector file, by name. */
    static List<Path> vectorFiles() throws IOException {
        Path vectors = dir().resolve("vectors");
        try (Stream<Path> files = Files.list(vectors)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
        }
    }

    static JsonObject read(Path file) throws IOException {
        return JsonParser.parseString(Files.readString(file, StandardCharsets.UTF_8)).getAsJsonObject();
    }

    /** The vectors of one kind. */
    static List<JsonObject> vectors(String kind) throws IOException {
        JsonObject file = read(dir().resolve("vectors").resolve(kind + ".json"));
        List<JsonObject> out = new ArrayList<>();
        file.getAsJsonArray("vectors").forEach(v -> out.add(v.getAsJsonObject()));
        return out;
    }

    /** {@code want}'s value of {@code key}: an absent key is the empty value. */
    static JsonElement want(JsonObject want, String key) {
        JsonElement v = want.get(key);
        return v == null ? JsonNull.INSTANCE : v;
    }

    static String text(JsonObject o, String key) {
        JsonElement v = o.get(key);
        return v == null || v.isJsonNull() ? "" : v.getAsString();
    }

    /** A descriptor from its vector spelling. */
    static ExceptionDescriptor descriptor(JsonObject o) {
        ExceptionDescriptor.Builder d = ExceptionDescriptor.newBuilder()
                .setType(text(o, "type"))
                .addAllSupertypes(strings(o.get("supertypes")))
                .setCode(text(o, "code"))
                .setMessage(text(o, "message"))
                .setLanguage(text(o, "language"))
                .setProvider(text(o, "provider"));
        if (o.has("http_status")) {
            d.setHttpStatus(o.get("http_status").getAsInt());
        }
        if (o.has("grpc_status")) {
            d.setGrpcStatus(o.get("grpc_status").getAsInt());
        }
        if (o.has("origin")) {
            Origin origin = Descriptors.origin(o.get("origin").getAsString());
            if (origin == null) {
                throw new IllegalArgumentException("no origin " + o.get("origin"));
            }
            d.setOrigin(origin);
        }
        if (o.has("causes")) {
            for (JsonElement e : o.getAsJsonArray("causes")) {
                JsonObject c = e.getAsJsonObject();
                Cause.Builder cause = Cause.newBuilder()
                        .setType(text(c, "type"))
                        .addAllSupertypes(strings(c.get("supertypes")))
                        .setCode(text(c, "code"))
                        .setMessage(text(c, "message"));
                if (c.has("http_status")) {
                    cause.setHttpStatus(c.get("http_status").getAsInt());
                }
                if (c.has("grpc_status")) {
                    cause.setGrpcStatus(c.get("grpc_status").getAsInt());
                }
                d.addCauses(cause);
            }
        }
        if (o.has("attributes")) {
            o.getAsJsonObject("attributes").entrySet().forEach(a -> d.putAttributes(a.getKey(), a.getValue().getAsString()));
        }
        return d.build();
    }

    /** A descriptor in its vector spelling. */
    static JsonObject json(ExceptionDescriptor d) {
        JsonObject o = new JsonObject();
        o.addProperty("type", d.getType());
        if (d.getSupertypesCount() > 0) {
            o.add("supertypes", array(d.getSupertypesList()));
        }
        if (d.hasHttpStatus()) {
            o.addProperty("http_status", d.getHttpStatus());
        }
        if (d.hasGrpcStatus()) {
            o.addProperty("grpc_status", d.getGrpcStatus());
        }
        if (d.getOriginValue() != 0) {
            o.addProperty("origin", Descriptors.originName(d.getOrigin()));
        }
        nonEmpty(o, "code", d.getCode());
        nonEmpty(o, "message", d.getMessage());
        if (d.getCausesCount() > 0) {
            JsonArray causes = new JsonArray();
            for (Cause c : d.getCausesList()) {
                JsonObject cause = new JsonObject();
                cause.addProperty("type", c.getType());
                if (c.getSupertypesCount() > 0) {
                    cause.add("supertypes", array(c.getSupertypesList()));
                }
                if (c.hasHttpStatus()) {
                    cause.addProperty("http_status", c.getHttpStatus());
                }
                if (c.hasGrpcStatus()) {
                    cause.addProperty("grpc_status", c.getGrpcStatus());
                }
                nonEmpty(cause, "code", c.getCode());
                nonEmpty(cause, "message", c.getMessage());
                causes.add(cause);
            }
            o.add("causes", causes);
        }
        nonEmpty(o, "language", d.getLanguage());
        nonEmpty(o, "provider", d.getProvider());
        if (d.getAttributesCount() > 0) {
            o.add("attributes", map(d.getAttributesMap()));
        }
        return o;
    }

    static JsonObject map(Map<String, String> values) {
        JsonObject o = new JsonObject();
        new TreeMap<>(values).forEach(o::addProperty);
        return o;
    }

    static JsonArray array(List<String> values) {
        JsonArray a = new JsonArray();
        values.forEach(a::add);
        return a;
    }

    private static void nonEmpty(JsonObject o, String key, String value) {
        if (!value.isEmpty()) {
            o.addProperty(key, value);
        }
    }

    static List<String> strings(JsonElement value) {
        List<String> out = new ArrayList<>();
        if (value != null && value.isJsonArray()) {
            value.getAsJsonArray().forEach(e -> out.add(e.getAsString()));
        }
        return out;
    }

    /** A JSON value as a Java program would hold it: text, a whole number, a decimal, a boolean, null. */
    static Object plain(JsonElement value) {
        if (value == null || value.isJsonNull()) {
            return null;
        }
        JsonPrimitive p = value.getAsJsonPrimitive();
        if (p.isBoolean()) {
            return p.getAsBoolean();
        }
        if (p.isNumber()) {
            String literal = p.getAsNumber().toString();
            return literal.matches("-?[0-9]+") ? (Object) new BigInteger(literal) : new BigDecimal(literal);
        }
        return p.getAsString();
    }

    static Map<String, Object> plainMap(JsonObject o) {
        Map<String, Object> out = new LinkedHashMap<>();
        o.entrySet().forEach(e -> out.put(e.getKey(), plain(e.getValue())));
        return out;
    }

    /** The fields where two JSON objects differ: "field: want X, got Y" each. */
    static List<String> differences(JsonObject want, JsonObject got) {
        List<String> out = new ArrayList<>();
        java.util.Set<String> keys = new java.util.TreeSet<>(want.keySet());
        keys.addAll(got.keySet());
        for (String k : keys) {
            JsonElement w = want(want, k);
            JsonElement g = want(got, k);
            if (!w.equals(g)) {
                out.add(k + ": want " + shorten(w) + ", got " + shorten(g));
            }
        }
        return out;
    }

    private static String shorten(JsonElement e) {
        String s = e.toString();
        return s.length() <= 300 ? s : s.substring(0, 150) + "..." + s.substring(s.length() - 150) + " (" + s.length() + " chars)";
    }
}
