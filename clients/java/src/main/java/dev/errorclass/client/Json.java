package dev.errorclass.client;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import java.io.IOException;
import java.io.StringReader;
import java.math.BigInteger;

/**
 * JSON as the APIs send it, read with Gson in strict mode (RFC 8259, as Python's
 * {@code json.loads} reads it: no comments, no single quotes, no unquoted names, the whole
 * text one value). Gson's own {@code JsonParser.parseString} is lenient, and would read
 * {@code {'error': ...}} or an HTML page's first word as JSON. Gson's nesting limit (255)
 * bounds a hostile body's depth.
 */
final class Json {
    private Json() {}

    /** The value {@code text} holds, or null when it is not one JSON value. */
    static JsonElement parse(String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        try (JsonReader reader = new JsonReader(new StringReader(text))) {
            reader.setStrictness(Strictness.STRICT);
            JsonElement value = JsonParser.parseReader(reader);
            return reader.peek() == JsonToken.END_DOCUMENT ? value : null;
        } catch (JsonParseException | IOException | IllegalStateException e) {
            return null;
        }
    }

    /** The object {@code value} is, or null. */
    static JsonObject object(JsonElement value) {
        return value != null && value.isJsonObject() ? value.getAsJsonObject() : null;
    }

    /** The member {@code name} of {@code object} when it is an object, else null. */
    static JsonObject object(JsonObject object, String name) {
        return object == null ? null : object(object.get(name));
    }

    /**
     * The value at a dotted path of member names, each with optional array indexes ({@code
     * violations[0].quotaId}); null when any step is missing or of another shape.
     */
    static JsonElement at(JsonObject object, String path) {
        JsonElement here = object;
        for (String step : path.split("\\.", -1)) {
            int bracket = step.indexOf('[');
            String name = bracket < 0 ? step : step.substring(0, bracket);
            JsonObject o = object(here);
            here = o == null ? null : o.get(name);
            while (here != null && bracket >= 0) {
                int close = step.indexOf(']', bracket);
                if (close < 0 || !here.isJsonArray()) {
                    return null;
                }
                int index;
                try {
                    index = Integer.parseInt(step.substring(bracket + 1, close));
                } catch (NumberFormatException e) {
                    return null;
                }
                var array = here.getAsJsonArray();
                here = index >= 0 && index < array.size() ? array.get(index) : null;
                bracket = step.indexOf('[', close);
            }
            if (here == null) {
                return null;
            }
        }
        return here;
    }

    /** Whether {@code value} is a JSON string. */
    static boolean isText(JsonElement value) {
        return value != null && value.isJsonPrimitive() && value.getAsJsonPrimitive().isString();
    }

    /** A JSON string, stripped; "" for anything else. */
    static String text(JsonElement value) {
        return isText(value) ? Text.strip(value.getAsString()) : "";
    }

    /**
     * A code as text: a string stripped, a whole number written in decimal ({@code 1001}),
     * anything else (a fraction, a boolean, null) none.
     */
    static String code(JsonElement value) {
        if (isText(value)) {
            return Text.strip(value.getAsString());
        }
        if (value != null && value.isJsonPrimitive() && ((JsonPrimitive) value).isNumber()) {
            String literal = value.getAsNumber().toString();
            if (literal.matches("-?[0-9]+")) {
                return new BigInteger(literal).toString();
            }
        }
        return "";
    }
}
