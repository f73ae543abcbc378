package dev.errorclass.client;

import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as providers write them, each form read one way (the port of
 * classifier/durations.py; clients/spec/vectors/retry_after.json holds it to the service):
 *
 * <ul>
 *   <li>{@link #goDuration}: OpenAI's {@code x-ratelimit-reset-*} ({@code 6m0s}, {@code 20ms},
 *       Go's {@code time.Duration} text);
 *   <li>{@link #protoDuration}: Google's RetryInfo {@code retryDelay} ({@code 0.5s}, proto3
 *       JSON's Duration);
 *   <li>{@link #decimalSeconds}: Retry-After's delay-seconds, and {@code retry-after-ms}.
 * </ul>
 *
 * <p>Each gives seconds as a double, or null for text it does not read: a malformed value is
 * ignored, never guessed at. Digits are ASCII only (the patterns use {@code [0-9]}, not a
 * Unicode digit class), signs and exponents are refused, and a number too large for a double
 * is infinity, which any cap cuts, as Python's {@code float} gives.
 */
final class Durations {
    private static final Map<String, Double> GO_UNITS = Map.of(
            "ns", 1e-9, "us", 1e-6, "\u00b5s", 1e-6, "\u03bcs", 1e-6, "ms", 1e-3, "s", 1.0, "m", 60.0, "h", 3600.0);
    private static final Pattern GO_PART =
            Pattern.compile("([0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)");
    private static final Pattern PROTO = Pattern.compile("[0-9]+(?:\\.[0-9]{1,9})?s");
    private static final Pattern DECIMAL = Pattern.compile("[0-9]+(?:\\.[0-9]+)?");

    private Durations() {}

    /**
     * Go's {@code time.Duration.String()} form and what {@code time.ParseDuration} reads: one or
     * more decimal numbers each with a unit ({@code 6m0s}, {@code 1.5h}, {@code 2h3m4.5s}), or
     * {@code 0}.
     */
    static Double goDuration(String text) {
        String t = Text.strip(text);
        if (t.equals("0")) {
            return 0.0;
        }
        if (t.isEmpty()) {
            return null;
        }
        double total = 0;
        Matcher m = GO_PART.matcher(t);
        int pos = 0;
        while (pos < t.length()) {
            m.region(pos, t.length());
            if (!m.lookingAt()) {
                return null;
            }
            total += Double.parseDouble(m.group(1)) * GO_UNITS.get(m.group(2));
            pos = m.end();
        }
        return total;
    }

    /** proto3 JSON's Duration: seconds with up to nine decimals and an {@code s} ({@code 25s}, {@code 0.5s}). */
    static Double protoDuration(String text) {
        String t = Text.strip(text);
        return PROTO.matcher(t).matches() ? Double.parseDouble(t.substring(0, t.length() - 1)) : null;
    }

    /**
     * A non-negative decimal number ({@code 20}, {@code 1.5}): Retry-After's delay-seconds is a
     * whole number, but SDKs read a fraction too, and so does this.
     */
    static Double decimalSeconds(String text) {
        String t = Text.strip(text);
        return DECIMAL.matcher(t).matches() ? Double.parseDouble(t) : null;
    }

    /**
     * {@code seconds} (finite, not negative) as a Duration of whole microseconds, rounded as
     * Python's {@code timedelta(seconds=x)} rounds (half to even on the fraction's
     * microseconds): the service's resolution, so a wait read here is the one it sends.
     */
    static Duration ofSeconds(double seconds) {
        double whole = Math.floor(seconds);
        long micros = (long) Math.rint((seconds - whole) * 1e6);
        return Duration.ofSeconds((long) whole).plusNanos(micros * 1_000L);
    }

    /** A Duration's seconds as a double, as Python's {@code timedelta.total_seconds()} gives them (whole microseconds). */
    static double seconds(Duration d) {
        return micros(d) / 1e6;
    }

    /** A Duration in whole microseconds (truncated). */
    static long micros(Duration d) {
        return d.getSeconds() * 1_000_000L + d.getNano() / 1_000;
    }
}
