package dev.errorclass.client;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.errorclass.v1.ExceptionDescriptor;
import java.util.ArrayList;
import java.util.List;

/**
 * The reasons a provider API's JSON response states, read as every errorclass client reads
 * them (clients/spec/README.md, {@code response}; response.json proves it), in this order, the
 * first failure deciding:
 *
 * <ul>
 *   <li>Gemini: {@code promptFeedback.blockReason} (a blocked prompt), each
 *       {@code candidates[].finishReason};
 *   <li>OpenAI chat completions: each {@code choices[].finish_reason}, and a
 *       {@code choices[].message.refusal} (as {@code refusal});
 *   <li>the Responses API: {@code incomplete_details.reason}, and a {@code refusal} part of an
 *       {@code output[]} message;
 *   <li>Anthropic: {@code stop_reason}, and a {@code message_delta} event's
 *       {@code delta.stop_reason};
 *   <li>Bedrock Converse: {@code stopReason}, and a {@code messageStop} event's
 *       {@code stopReason}.
 *   <li>Then an object's {@code response} (a Responses API stream event).
 * </ul>
 *
 * <p>A JSON array is a stream's chunks or events, read in order. The provider is the caller's,
 * else the API's; the model is {@code model}, else {@code modelVersion}.
 */
final class Responses {
    /** How deep arrays of chunks may nest; a response is never deeper. */
    static final int MAX_DEPTH = 6;

    private record Reason(String provider, String reason, boolean blocked, String model) {}

    private Responses() {}

    static ExceptionDescriptor describe(JsonElement response, String provider) {
        List<Reason> reasons = new ArrayList<>();
        collect(response, 0, reasons);
        String given = Text.strip(provider);
        for (Reason r : reasons) {
            ExceptionDescriptor d = Descriptors.fromFinishReason(
                    r.reason(), given.isEmpty() ? r.provider() : given, r.blocked(), r.model());
            if (d != null) {
                return d;
            }
        }
        return null;
    }

    private static void collect(JsonElement response, int depth, List<Reason> out) {
        if (response == null || depth > MAX_DEPTH) {
            return;
        }
        if (response.isJsonArray()) {
            for (JsonElement item : response.getAsJsonArray()) {
                collect(item, depth + 1, out);
            }
            return;
        }
        JsonObject r = Json.object(response);
        if (r == null) {
            return;
        }
        String model = Json.text(r.get("model"));
        if (model.isEmpty()) {
            model = Json.text(r.get("modelVersion"));
        }
        JsonObject feedback = Json.object(r, "promptFeedback");
        String block = feedback == null ? "" : Json.text(feedback.get("blockReason"));
        if (!block.isEmpty()) {
            out.add(new Reason("gemini", block, true, model));
        }
        for (JsonObject candidate : objects(r.get("candidates"))) {
            out.add(new Reason("gemini", Json.text(candidate.get("finishReason")), false, model));
        }
        for (JsonObject choice : objects(r.get("choices"))) {
            out.add(new Reason("openai", Json.text(choice.get("finish_reason")), false, model));
            JsonObject message = Json.object(choice, "message");
            if (message != null && !Json.text(message.get("refusal")).isEmpty()) {
                out.add(new Reason("openai", "refusal", false, model));
            }
        }
        JsonObject details = Json.object(r, "incomplete_details");
        if (details != null) {
            out.add(new Reason("openai", Json.text(details.get("reason")), false, model));
        }
        for (JsonObject item : objects(r.get("output"))) {
            if ("message".equals(Json.text(item.get("type")))) {
                for (JsonObject part : objects(item.get("content"))) {
                    if ("refusal".equals(Json.text(part.get("type")))) {
                        out.add(new Reason("openai", "refusal", false, model));
                    }
                }
            }
        }
        out.add(new Reason("anthropic", Json.text(r.get("stop_reason")), false, model));
        JsonObject delta = Json.object(r, "delta");
        if (delta != null && "message_delta".equals(Json.text(r.get("type")))) {
            out.add(new Reason("anthropic", Json.text(delta.get("stop_reason")), false, model));
        }
        out.add(new Reason("bedrock", Json.text(r.get("stopReason")), false, model));
        JsonObject stop = Json.object(r, "messageStop");
        if (stop != null) {
            out.add(new Reason("bedrock", Json.text(stop.get("stopReason")), false, model));
        }
        // A Responses API stream event (response.incomplete) carries the response itself.
        JsonObject inner = Json.object(r, "response");
        if (inner != null) {
            collect(inner, depth + 1, out);
        }
    }

    /** The objects of a JSON array; none for anything else. */
    private static List<JsonObject> objects(JsonElement value) {
        List<JsonObject> out = new ArrayList<>();
        if (value != null && value.isJsonArray()) {
            JsonArray array = value.getAsJsonArray();
            for (JsonElement e : array) {
                if (e.isJsonObject()) {
                    out.add(e.getAsJsonObject());
                }
            }
        }
        return out;
    }
}
