package dev.errorclass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.errorclass.v1.Origin;
import io.grpc.Status;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The client when the service cannot answer (a loopback port nothing listens on, a socket that
 * never answers), and the breaker; a real server's answers are tested from Python
 * (tests/examples/test_java_package.py).
 */
class ClassifierClientTest {

    private static int closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Test
    void unreachableIsUnclassifiedKeepingTheDescriptorThenTheBreakerOpens() throws Exception {
        ClassifierClient.Options options = ClassifierClient.Options.DEFAULTS.withAttempts(1);
        try (ClassifierClient client = ClassifierClient.connect("127.0.0.1:" + closedPort(), options)) {
            RuntimeException error = new RuntimeException("boom");
            for (int i = 0; i < Breaker.DEFAULT_FAILURES; i++) {
                Classification c = client.classify(error, Origin.ORIGIN_PROVIDER, "openai");
                Classification.Unclassified u = assertInstanceOf(Classification.Unclassified.class, c);
                assertEquals("java.lang.RuntimeException", u.descriptor().getType());
                assertEquals(Status.Code.UNAVAILABLE, u.status());
                assertFalse(u.shortCircuited());
            }
            assertTrue(client.circuitOpen());
            Classification.Unclassified fast = assertInstanceOf(Classification.Unclassified.class,
                    client.classify(error, Origin.ORIGIN_PROVIDER, "openai"));
            assertTrue(fast.shortCircuited());
        }
    }

    @Test
    void aHungServerCostsOneWaitThenShortCircuits() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            ClassifierClient.Options options = ClassifierClient.Options.DEFAULTS.withTimeout(Duration.ofMillis(200));
            try (ClassifierClient client = ClassifierClient.connect("127.0.0.1:" + silent.getLocalPort(), options)) {
                long start = System.nanoTime();
                Classification.Unclassified first = assertInstanceOf(Classification.Unclassified.class,
                        client.classify(new RuntimeException("x"), Origin.ORIGIN_PROVIDER, ""));
                assertEquals(Status.Code.DEADLINE_EXCEEDED, first.status());
                assertTrue(client.circuitOpen());
                assertTrue(client.classify(new RuntimeException("y"), Origin.ORIGIN_PROVIDER, "") instanceof Classification.Unclassified u
                        && u.shortCircuited());
                // never READY: the first call may wait FIRST_CONNECT, and no call after it waits at all
                assertTrue(System.nanoTime() - start < ClassifierClient.FIRST_CONNECT.plusSeconds(2).toNanos());
            }
        }
    }

    @Test
    void theBreakerClosesWhenAProbeSucceeds() throws Exception {
        AtomicBoolean up = new AtomicBoolean(false);
        Breaker breaker = new Breaker(up::get, 3, Duration.ofMillis(20), Duration.ofMillis(40));
        breaker.failed(Status.Code.INVALID_ARGUMENT);
        assertTrue(breaker.allow(), "a refused request says nothing about the service");
        breaker.failed(Status.Code.DEADLINE_EXCEEDED);
        assertFalse(breaker.allow());
        up.set(true);
        for (int i = 0; i < 200 && !breaker.allow(); i++) {
            Thread.sleep(10);
        }
        assertTrue(breaker.allow());
        assertEquals(1, breaker.opened());
        breaker.close();
    }

    @Test
    void optionsRefuseNonsense() {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ClassifierClient.Options.DEFAULTS.withAttempts(0));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> ClassifierClient.Options.DEFAULTS.withTimeout(Duration.ZERO));
    }
}
