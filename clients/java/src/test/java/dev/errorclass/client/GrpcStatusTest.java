package dev.errorclass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.errorclass.v1.ExceptionDescriptor;
import dev.errorclass.v1.Origin;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import org.junit.jupiter.api.Test;

/** grpc-java's real status exceptions (grpc is on this package's class path anyway). */
class GrpcStatusTest {

    @Test
    void statusRuntimeExceptionCarriesItsCode() {
        ExceptionDescriptor d = Descriptors.from(
                new StatusRuntimeException(Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded after 1s")),
                Origin.ORIGIN_TOOL, "");
        assertEquals("io.grpc.StatusRuntimeException", d.getType());
        assertEquals(4, d.getGrpcStatus());
        assertEquals("DEADLINE_EXCEEDED", d.getCode());
    }

    @Test
    void aWrappedStatusExceptionIsACauseWithItsCode() {
        RuntimeException wrapper = new RuntimeException("tool failed",
                new StatusException(Status.UNAVAILABLE.withDescription("io exception")));
        ExceptionDescriptor d = Descriptors.from(wrapper, Origin.ORIGIN_TOOL, "");
        assertEquals(14, d.getCauses(0).getGrpcStatus());
        assertEquals("UNAVAILABLE", d.getCauses(0).getCode());
    }
}
