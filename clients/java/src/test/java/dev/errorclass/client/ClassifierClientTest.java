package dev.errorclass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.Any;
import com.google.rpc.BadRequest;
import dev.errorclass.v1.ClassifyBatchRequest;
import dev.errorclass.v1.ClassifyBatchResponse;
import dev.errorclass.v1.ClassifyRequest;
import dev.errorclass.v1.ClassifyResponse;
import dev.errorclass.v1.ErrorClassifierGrpc;
import dev.errorclass.v1.ExceptionDescriptor;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The client's answers from a real grpc-java server on 127.0.0.1 (the real classifier's are
 * tested from Python: tests/clients/test_java_package.py and the conformance suite).
 */
class ClassifierClientTest {

    /** Answers each descriptor with its own type as the class name, so the order shows. */
    static final class Echo extends ErrorClassifierGrpc.ErrorClassifierImplBase {
        @Override
        public void classifyBatch(ClassifyBatchRequest request, StreamObserver<ClassifyBatchResponse> out) {
            ClassifyBatchResponse.Builder answer = ClassifyBatchResponse.newBuilder();
            for (ClassifyRequest r : request.getRequestsList()) {
                answer.addResponses(ClassifyResponse.newBuilder().setClassName(r.getDescriptor().getType()).setRulesetDigest("sha256:x"));
            }
            out.onNext(answer.build());
            out.onCompleted();
        }
    }

    /** Refuses every call as the service refuses a descriptor: INVALID_ARGUMENT with a google.rpc.BadRequest detail. */
    static final class Refusing implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            BadRequest bad = BadRequest.newBuilder()
                    .addFieldViolations(BadRequest.FieldViolation.newBuilder().setField("descriptor.type").setDescription("must not be empty"))
                    .addFieldViolations(BadRequest.FieldViolation.newBuilder().setField("descriptor.causes[1].code")
                            .setDescription("300 characters exceed the limit of 256"))
                    .build();
            com.google.rpc.Status details = com.google.rpc.Status.newBuilder()
                    .setCode(Status.Code.INVALID_ARGUMENT.value())
                    .setMessage("descriptor.type: must not be empty")
                    .addDetails(Any.newBuilder().setTypeUrl("type.googleapis.com/google.rpc.BadRequest").setValue(bad.toByteString()))
                    .build();
            Metadata trailers = new Metadata();
            trailers.put(Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER), details.toByteArray());
            call.close(Status.INVALID_ARGUMENT.withDescription("descriptor.type: must not be empty"), trailers);
            return new ServerCall.Listener<>() {};
        }
    }

    private static final ServerInterceptor PASS = new ServerInterceptor() {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            return next.startCall(call, headers);
        }
    };

    @Test
    void aRefusedDescriptorRaisesTheBadRequestViolations() throws Exception {
        Server server = Outage.serve(new Refusing(), new ErrorClassifierGrpc.ErrorClassifierImplBase() {});
        try (ClassifierClient client = ClassifierClient.connect("127.0.0.1:" + server.getPort())) {
            InvalidDescriptorException e = assertThrows(InvalidDescriptorException.class,
                    () -> client.classify(ExceptionDescriptor.newBuilder().setType("").build()));
            assertEquals(List.of(
                    new InvalidDescriptorException.FieldViolation("descriptor.type", "must not be empty"),
                    new InvalidDescriptorException.FieldViolation("descriptor.causes[1].code", "300 characters exceed the limit of 256")),
                    e.violations());
            assertEquals(false, client.circuitOpen(), "a refused request says nothing about the service");
        } finally {
            Outage.stop(server);
        }
    }

    @Test
    void aBatchIsAnsweredInOrder() throws Exception {
        Server server = Outage.serve(PASS, new Echo());
        try (ClassifierClient client = ClassifierClient.connect("127.0.0.1:" + server.getPort())) {
            List<ExceptionDescriptor> batch = new ArrayList<>();
            for (String type : List.of("a.First", "b.Second", "c.Third")) {
                batch.add(ExceptionDescriptor.newBuilder().setType(type).build());
            }
            List<Classification> answers = client.classifyBatch(batch);
            assertEquals(3, answers.size());
            for (int i = 0; i < 3; i++) {
                Classification.Classified c = assertInstanceOf(Classification.Classified.class, answers.get(i));
                assertEquals(batch.get(i), c.descriptor());
                assertEquals(batch.get(i).getType(), c.className());
                assertEquals("sha256:x", c.rulesetDigest());
            }
            assertEquals(List.of(), client.classifyBatch(List.of()));
            List<ExceptionDescriptor> tooMany = new ArrayList<>();
            for (int i = 0; i <= Facts.MAX_BATCH; i++) {
                tooMany.add(batch.get(0));
            }
            assertThrows(IllegalArgumentException.class, () -> client.classifyBatch(tooMany));
        } finally {
            Outage.stop(server);
        }
    }

    /** Answers every descriptor retryable after 1.5 s, as the service does from a descriptor's retry evidence. */
    static final class RetryAfter extends ErrorClassifierGrpc.ErrorClassifierImplBase {
        @Override
        public void classify(ClassifyRequest request, StreamObserver<ClassifyResponse> out) {
            out.onNext(ClassifyResponse.newBuilder().setClassName("RateLimited").setRetryable(true)
                    .setRetryAfter(com.google.protobuf.Duration.newBuilder().setSeconds(1).setNanos(500_000_000))
                    .setRetryAfterSource("http.response.header.retry-after-ms").build());
            out.onCompleted();
        }
    }

    @Test
    void retryAfterIsADuration() throws Exception {
        Server server = Outage.serve(PASS, new RetryAfter());
        try (ClassifierClient client = ClassifierClient.connect("127.0.0.1:" + server.getPort())) {
            Classification.Classified c = assertInstanceOf(Classification.Classified.class,
                    client.classify(ExceptionDescriptor.newBuilder().setType("openai.RateLimitError").build()));
            assertEquals(java.util.Optional.of(java.time.Duration.ofMillis(1500)), c.retryAfter());
            assertEquals("http.response.header.retry-after-ms", c.retryAfterSource());
            assertEquals(false, c.local());
        } finally {
            Outage.stop(server);
        }
        Server none = Outage.serve(PASS, new Echo());
        try (ClassifierClient client = ClassifierClient.connect("127.0.0.1:" + none.getPort())) {
            Classification.Classified c = assertInstanceOf(Classification.Classified.class,
                    client.classifyBatch(List.of(ExceptionDescriptor.newBuilder().setType("x.Y").build())).get(0));
            assertEquals(java.util.Optional.empty(), c.retryAfter(), "unset: the provider did not say");
            assertEquals("", c.retryAfterSource());
        } finally {
            Outage.stop(none);
        }
    }
}
