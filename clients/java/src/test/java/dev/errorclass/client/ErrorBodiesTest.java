package dev.errorclass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The shapes classifier/client/http_bodies.py reads, read the same way. */
class ErrorBodiesTest {

    @Test
    void openai() {
        ErrorBodies.Evidence e = ErrorBodies.read(
                "{\"error\": {\"message\": \"too long\", \"type\": \"invalid_request_error\", \"param\": null, \"code\": \"context_length_exceeded\"}}",
                null, 400);
        assertEquals("context_length_exceeded", e.code());
        assertEquals("too long", e.message());
    }

    @Test
    void aCodeThatRepeatsTheStatusIsNoCode() {
        assertEquals("", ErrorBodies.read("{\"error\": {\"code\": \"429\", \"message\": \"slow down\"}}", null, 429).code());
        assertEquals("", ErrorBodies.read("{\"error\": {\"code\": 429, \"message\": \"slow down\"}}", null, 429).code());
    }

    @Test
    void anthropic() {
        ErrorBodies.Evidence e = ErrorBodies.read(
                "{\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}", null, 529);
        assertEquals("overloaded_error", e.code());
        assertEquals(Map.of(), e.attributes());
    }

    @Test
    void gemini() {
        ErrorBodies.Evidence e = ErrorBodies.read(
                "{\"error\": {\"code\": 429, \"message\": \"quota\", \"status\": \"RESOURCE_EXHAUSTED\"}}", null, 429);
        assertEquals("RESOURCE_EXHAUSTED", e.code());
        assertEquals(8, e.grpcStatus());
    }

    @Test
    void bedrockHeaderThenType() {
        assertEquals("ThrottlingException",
                ErrorBodies.read("{\"message\": \"Too many\"}", "ThrottlingException:http://internal.amazon.com/coral/", 429).code());
        assertEquals("ValidationException",
                ErrorBodies.read("{\"__type\": \"com.amazon.coral#ValidationException\", \"message\": \"bad\"}", null, 400).code());
    }

    @Test
    void unknownShapesAndBrokenTextGiveNothing() {
        assertTrue(ErrorBodies.read("{\"detail\": \"nope\"}", null, 400).isEmpty());
        assertTrue(ErrorBodies.read("{\"error\": ", null, 400).isEmpty());
        assertTrue(ErrorBodies.read(null, null, null).isEmpty());
        assertNull(Json.parse("[1, 2"));
        assertEquals(Json.NULL, Json.parse(" null "));
    }
}
