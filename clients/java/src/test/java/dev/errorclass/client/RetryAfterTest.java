package dev.errorclass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Test;

/**
 * The dates a wait is read from, beyond the retry_after vectors' forms: each expected value is
 * what the service's readers give (Python 3.11's email.utils.parsedate_to_datetime, a date
 * without a zone in GMT, and datetime.fromisoformat with an offset required), so the Java
 * readers take and refuse the same texts.
 */
class RetryAfterTest {
    private static final Object[][] HTTP_DATES = {
            {"Thu, 01 Jan 26 00:00:30 GMT", 1767225630L},
            {"Thu, 01 Jan 2026 00:00:30", 1767225630L},
            {"01 Jan 2026 00:00:30 UTC", 1767225630L},
            {"Thu, 01 Jan 2026 00:00:30 Z", 1767225630L},
            {"Thu, 01 Jan 2026 00:00 GMT", 1767225600L},
            {"Thu, 1 jan 2026 00:00:30 +0130", 1767220230L},
            {"Thu, 01 Jan 70 00:00:30 GMT", 30L},
            {"Thu, 01 Jan 2026 00:00:30 EST", 1767243630L},
            {"Thu, 01 Jan 2026 00:00:30 -0000", 1767225630L},
            {"Thursday, 01-Jan-2026 00:00:45 GMT", 1767225645L},
            {"Thu Jan 1 00:00:50 2026 GMT", 1767225650L},
            {"Fri, 01 Jan 2026 00:00:30 GMT", 1767225630L},
            {"THU, 01 JAN 2026 00:00:30 GMT", 1767225630L},
            {"Thu, 01 Jan 2026 24:00:00 GMT", null},
            {"Thu, 32 Jan 2026 00:00:00 GMT", null},
            {"Thu, 01 Foo 2026 00:00:00 GMT", null},
            {"Jan 1 00:00:50 2026", 1767225650L},
            {"Thursday 01 Jan 2026 00:00:30 GMT", null},
            {"soon", null},
            {"", null},
    };

    private static final Object[][] TIMESTAMPS = {
            {"2026-01-01T00:00:05.1234567Z", 1767225605123456L},
            {"2026-01-01t00:00:05Z", 1767225605000000L},
            {"2026-01-01T00:00Z", 1767225600000000L},
            {"2026-01-01T00:00:05+0100", 1767222005000000L},
            {"2026-01-01T00:00:05.25+01:00", 1767222005250000L},
            {"2026-01-01T00:00:30", null},
            {"2026-01-02", null},
            {"2026-01-01 00:00:05Z", null},
            {"2026-13-01T00:00:05Z", null},
            {"2026-01-01T00:00:05+01:00:30", 1767221975000000L},
    };

    @Test
    void httpDatesReadAsTheServiceReadsThem() {
        for (Object[] c : HTTP_DATES) {
            Instant got = RetryAfter.httpDate((String) c[0]);
            assertEquals(c[1], got == null ? null : got.getEpochSecond(), (String) c[0]);
        }
    }

    @Test
    void timestampsReadAsTheServiceReadsThem() {
        for (Object[] c : TIMESTAMPS) {
            Instant got = RetryAfter.timestamp((String) c[0]);
            assertEquals(c[1], got == null ? null : ChronoUnit.MICROS.between(Instant.EPOCH, got), (String) c[0]);
        }
    }

    @Test
    void aWaitIsWholeMicrosecondsRoundedAsTimedeltaRoundsThem() {
        assertEquals(Duration.ofNanos(20_000_500_000L), Durations.ofSeconds(20.0005));
        assertEquals(Duration.ofNanos(2_000L), Durations.ofSeconds(0.0000025), "half to even: 2.5 us is 2");
        assertEquals(Duration.ofNanos(4_000L), Durations.ofSeconds(0.0000035), "half to even: 3.5 us is 4");
        assertEquals("http.response.header.retry-after (capped)",
                new RetryAfter(Duration.ofSeconds(60), RetryAfter.RETRY_AFTER, true).labelledSource());
        assertEquals(new RetryAfter(Duration.ofSeconds(60), RetryAfter.RETRY_AFTER, true),
                RetryAfter.fromLabelled(Duration.ofSeconds(60), RetryAfter.RETRY_AFTER + RetryAfter.CAPPED_LABEL));
        assertThrows(IllegalArgumentException.class, () -> new RetryAfter(Duration.ofSeconds(-1), "x", false));
    }
}
