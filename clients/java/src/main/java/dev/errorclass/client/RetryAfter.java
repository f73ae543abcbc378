package dev.errorclass.client;

import java.time.Clock;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * How long a retryable answer advises waiting, and which evidence said so: the port of the
 * service's {@code classifier/engine/retry_after.py}, so a bundle answers with the wait the
 * service would send ({@code ClassifyResponse.retry_after} and {@code retry_after_source}).
 *
 * <p>The sources, the most specific first (the first that reads decides; a value that does not
 * read is skipped and the next source read):
 *
 * <ol>
 *   <li>{@code retry-after-ms}, then {@code x-ms-retry-after-ms}: milliseconds;
 *   <li>{@code retry-after}: seconds, or an HTTP date in any of RFC 9110's three forms;
 *   <li>{@code google.rpc.retry_info.retry_delay}: Google's RetryInfo, a proto Duration;
 *   <li>OpenAI's {@code x-ratelimit-reset-requests} and {@code -tokens} (Go durations), the later;
 *   <li>Anthropic's four {@code anthropic-ratelimit-*-reset} (RFC 3339 timestamps), the latest.
 * </ol>
 *
 * A date becomes a wait from the provider's own clock, its {@code date} header, when that reads,
 * else from the runtime's clock; a date already past is a wait of zero. A wait longer than the
 * cap is the cap, {@link #capped()}. Headers are the {@code http.response.header.*} attributes
 * the builders keep ({@link Facts#EVIDENCE_HEADERS}).
 *
 * @param delay how long to wait (whole microseconds, the service's resolution)
 * @param source the attribute it was read from ({@code http.response.header.retry-after})
 * @param capped whether the cap cut what the provider asked for ({@code delay} is then the cap)
 */
public record RetryAfter(Duration delay, String source, boolean capped) {
    /** What {@code retry_after_source} ends with on the wire when the cap cut the wait. */
    public static final String CAPPED_LABEL = " (capped)";

    private static final String H = Facts.HEADER_ATTRIBUTE_PREFIX;
    static final String RETRY_AFTER_MS = H + "retry-after-ms";
    static final String X_MS_RETRY_AFTER_MS = H + "x-ms-retry-after-ms";
    static final String RETRY_AFTER = H + "retry-after";
    static final String RETRY_DELAY = "google.rpc.retry_info.retry_delay";
    static final List<String> OPENAI_RESETS = List.of(H + "x-ratelimit-reset-requests", H + "x-ratelimit-reset-tokens");
    static final List<String> ANTHROPIC_RESETS = List.of(H + "anthropic-ratelimit-requests-reset",
            H + "anthropic-ratelimit-tokens-reset", H + "anthropic-ratelimit-input-tokens-reset",
            H + "anthropic-ratelimit-output-tokens-reset");
    static final String DATE = H + "date";
    private static final Set<String> EVIDENCE = evidence();

    public RetryAfter {
        if (delay == null || delay.isNegative() || source == null || source.isEmpty()) {
            throw new IllegalArgumentException("a wait of zero or more, and its source, are required");
        }
    }

    /** The source as the wire's {@code retry_after_source} says it: with {@value #CAPPED_LABEL} when the cap cut the wait. */
    public String labelledSource() {
        return capped ? source + CAPPED_LABEL : source;
    }

    /** The advice a wire answer carries ({@link #labelledSource()}'s inverse). */
    static RetryAfter fromLabelled(Duration wait, String labelled) {
        boolean capped = labelled.endsWith(CAPPED_LABEL);
        return new RetryAfter(wait, capped ? labelled.substring(0, labelled.length() - CAPPED_LABEL.length()) : labelled, capped);
    }

    /**
     * The wait the descriptor's evidence {@code attributes} ask for, capped at {@code cap};
     * empty when no attribute says one. The caller decides whether the answer is retryable (a
     * wait is never advised for one that is not). {@code clock} is read only when a date must be
     * turned into a wait and the provider sent no readable {@code date}.
     */
    public static Optional<RetryAfter> read(Map<String, String> attributes, Duration cap, Clock clock) {
        if (attributes.isEmpty() || !hasEvidence(attributes)) {
            return Optional.empty();
        }
        Now now = new Now(attributes, clock);
        Found found = one(attributes, RETRY_AFTER_MS, RetryAfter::milliseconds);
        if (found == null) {
            found = one(attributes, X_MS_RETRY_AFTER_MS, RetryAfter::milliseconds);
        }
        if (found == null) {
            found = one(attributes, RETRY_AFTER, v -> retryAfter(v, now));
        }
        if (found == null) {
            found = one(attributes, RETRY_DELAY, Durations::protoDuration);
        }
        if (found == null) {
            found = latest(attributes, OPENAI_RESETS, Durations::goDuration);
        }
        if (found == null) {
            found = latest(attributes, ANTHROPIC_RESETS, v -> until(timestamp(v), now));
        }
        if (found == null) {
            return Optional.empty();
        }
        if (found.seconds > Durations.seconds(cap)) {
            return Optional.of(new RetryAfter(cap, found.source, true));
        }
        return Optional.of(new RetryAfter(Durations.ofSeconds(found.seconds), found.source, false));
    }

    private static boolean hasEvidence(Map<String, String> attributes) {
        if (attributes.size() < EVIDENCE.size()) {
            for (String name : attributes.keySet()) {
                if (EVIDENCE.contains(name)) {
                    return true;
                }
            }
            return false;
        }
        for (String name : EVIDENCE) {
            if (attributes.containsKey(name)) {
                return true;
            }
        }
        return false;
    }

    private record Found(String source, double seconds) {}

    private static Found one(Map<String, String> attributes, String name, Function<String, Double> read) {
        String value = attributes.get(name);
        if (value == null) {
            return null;
        }
        Double seconds = read.apply(value);
        return seconds == null ? null : new Found(name, seconds);
    }

    private static Double milliseconds(String value) {
        Double ms = Durations.decimalSeconds(value);
        return ms == null ? null : ms / 1000;
    }

    /** The longest wait among one provider's readable resets (the first named, on a tie). */
    private static Found latest(Map<String, String> attributes, List<String> names, Function<String, Double> read) {
        Found best = null;
        for (String name : names) {
            Found f = one(attributes, name, read);
            if (f != null && (best == null || f.seconds > best.seconds)) {
                best = f;
            }
        }
        return best;
    }

    /** Now, as the provider saw it: its {@code date} header, else the runtime's clock (read once, and only if a date needs it). */
    private static final class Now {
        private final Map<String, String> attributes;
        private final Clock clock;
        private Instant value;

        Now(Map<String, String> attributes, Clock clock) {
            this.attributes = attributes;
            this.clock = clock;
        }

        Instant get() {
            if (value == null) {
                String date = attributes.get(DATE);
                Instant provider = date == null ? null : httpDate(date);
                value = provider != null ? provider : clock.instant().truncatedTo(ChronoUnit.MICROS);
            }
            return value;
        }
    }

    /** Retry-After: delay-seconds, or an HTTP date. */
    private static Double retryAfter(String value, Now now) {
        Double seconds = Durations.decimalSeconds(value);
        return seconds != null ? seconds : until(httpDate(value), now);
    }

    private static Double until(Instant when, Now now) {
        if (when == null) {
            return null;
        }
        return Math.max(0.0, Durations.seconds(Duration.between(now.get(), when)));
    }

    // ---- HTTP dates (RFC 9110, 5.6.7) ----

    /**
     * A leading day name, which the forms spell differently and which says nothing the date does
     * not: a word with a comma, or a day's three letters (as email.utils drops it).
     */
    private static final Pattern DAY_NAME =
            Pattern.compile("^(?:[A-Za-z]+,|(?i:mon|tue|wed|thu|fri|sat|sun))[ \\t]+");
    private static final String ZONE = "(?:[ \\t]+([A-Za-z]{1,3}|[+-][0-9]{4}))?";
    private static final String TIME = "([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?";
    /** IMF-fixdate's {@code 01 Jan 2026 00:00:30 GMT} and RFC 850's {@code 01-Jan-26 00:00:45 GMT}. */
    private static final Pattern DAY_FIRST = Pattern.compile(
            "([0-9]{1,2})[ -]([A-Za-z]{3})[ -]([0-9]{4}|[0-9]{2})[ \\t]+" + TIME + ZONE);
    /** asctime's {@code Jan  1 00:00:50 2026}. */
    private static final Pattern MONTH_FIRST = Pattern.compile(
            "([A-Za-z]{3})[ \\t]+([0-9]{1,2})[ \\t]+" + TIME + "[ \\t]+([0-9]{4})" + ZONE);
    private static final List<String> MONTHS =
            List.of("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec");
    /** The zone names Python's email.utils knows (RFC 822's), in hours from GMT. */
    private static final Map<String, Integer> ZONES = Map.ofEntries(Map.entry("ut", 0), Map.entry("utc", 0), Map.entry("gmt", 0),
            Map.entry("z", 0), Map.entry("ast", -4), Map.entry("adt", -3), Map.entry("est", -5), Map.entry("edt", -4),
            Map.entry("cst", -6), Map.entry("cdt", -5), Map.entry("mst", -7), Map.entry("mdt", -6), Map.entry("pst", -8),
            Map.entry("pdt", -7));

    /**
     * An HTTP date in any of RFC 9110's forms, IMF-fixdate ({@code Thu, 01 Jan 2026 00:00:30
     * GMT}), RFC 850's ({@code Thursday, 01-Jan-26 00:00:45 GMT}) and asctime's ({@code Thu Jan
     * 1 00:00:50 2026}); null for anything else. Read as the service's reader (Python's
     * email.utils) reads them: the day name not checked, a two-digit year in 1969-2068, seconds
     * optional, a date without a zone in GMT, a numeric zone or an RFC 822 zone name honoured.
     * (java.time's RFC 1123 formatter reads only the first form, and checks the day name.)
     */
    static Instant httpDate(String value) {
        String text = DAY_NAME.matcher(Text.strip(value)).replaceFirst("");
        java.util.regex.Matcher m = DAY_FIRST.matcher(text);
        int day;
        String month;
        int year;
        int time;
        String zone;
        if (m.matches()) {
            day = Integer.parseInt(m.group(1));
            month = m.group(2);
            year = Integer.parseInt(m.group(3));
            if (m.group(3).length() == 2) {
                year += year > 68 ? 1900 : 2000;
            }
            time = 4;
            zone = m.group(7);
        } else {
            m = MONTH_FIRST.matcher(text);
            if (!m.matches()) {
                return null;
            }
            month = m.group(1);
            day = Integer.parseInt(m.group(2));
            year = Integer.parseInt(m.group(6));
            time = 3;
            zone = m.group(7);
        }
        int monthNumber = MONTHS.indexOf(month.toLowerCase(Locale.ROOT)) + 1;
        int offsetSeconds;
        if (zone == null) {
            offsetSeconds = 0;
        } else if (zone.startsWith("+") || zone.startsWith("-")) {
            int hhmm = Integer.parseInt(zone.substring(1));
            offsetSeconds = (zone.startsWith("-") ? -1 : 1) * ((hhmm / 100) * 3600 + (hhmm % 100) * 60);
        } else {
            Integer hours = ZONES.get(zone.toLowerCase(Locale.ROOT));
            offsetSeconds = hours == null ? 0 : hours * 3600; // an unknown name is GMT, as Python takes it
        }
        if (monthNumber == 0) {
            return null;
        }
        try {
            LocalDateTime when = LocalDateTime.of(year, monthNumber, day, Integer.parseInt(m.group(time)),
                    Integer.parseInt(m.group(time + 1)), m.group(time + 2) == null ? 0 : Integer.parseInt(m.group(time + 2)));
            return when.toInstant(ZoneOffset.ofTotalSeconds(offsetSeconds));
        } catch (DateTimeException e) {
            return null; // 32 January, 24:00, an offset past 18 hours
        }
    }

    /** RFC 3339 with its offset ({@code +01:00}, {@code +0100}, {@code Z}), seconds and a fraction optional, {@code T} in either case. */
    private static final DateTimeFormatter RFC_3339 = new DateTimeFormatterBuilder()
            .parseCaseInsensitive()
            .append(DateTimeFormatter.ISO_LOCAL_DATE_TIME)
            .optionalStart().appendOffset("+HH:MM:ss", "Z").optionalEnd()
            .optionalStart().appendOffset("+HHMM", "Z").optionalEnd()
            .toFormatter(Locale.ROOT);

    /**
     * An RFC 3339 timestamp with its offset ({@code 2025-06-01T12:00:30Z}); one without a zone
     * says nothing certain and is ignored. Kept to whole microseconds, as the service's reader
     * keeps it.
     */
    static Instant timestamp(String value) {
        String text = Text.strip(value);
        if (text.indexOf('T') < 0 && text.indexOf('t') < 0) {
            return null;
        }
        try {
            return OffsetDateTime.parse(text, RFC_3339).toInstant().truncatedTo(ChronoUnit.MICROS);
        } catch (DateTimeException e) {
            return null;
        }
    }

    private static Set<String> evidence() {
        java.util.HashSet<String> out = new java.util.HashSet<>(List.of(RETRY_AFTER_MS, X_MS_RETRY_AFTER_MS, RETRY_AFTER, RETRY_DELAY));
        out.addAll(OPENAI_RESETS);
        out.addAll(ANTHROPIC_RESETS);
        return Set.copyOf(out);
    }
}
