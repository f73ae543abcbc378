package dev.errorclass.client;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A message pattern that only names a few literal texts, decided without running a regular
 * expression. Most of the library's patterns are such ({@code ^unexpected EOF$}, {@code
 * (?i)content_filter|content_policy_violation|content management policy}, {@code ^(circuit
 * breaker is open|too many requests)$}, {@code ^API returned unexpected status code: 40[13]\b},
 * {@code ^API returned unexpected status code: 400: .*maximum context length}): a branch is an
 * optional {@code ^}, an optional {@code \b}, segments whose language is finite (literal
 * characters, escaped punctuation, groups of alternatives, {@code ?}, small classes, {@code \d},
 * a counted repetition) separated by {@code .*}, an optional {@code \b} and an optional {@code
 * $}. The texts are expanded once, at load; a message matches when its segments occur in order
 * (a gap never crossing a newline, but with {@code (?s)}), the first at its start for {@code ^},
 * the last at its end for {@code $}, with RE2's ASCII word boundaries where the pattern asks. A
 * case-insensitive pattern compares the folded message ({@link LiteralPrefilter#fold}) with
 * folded texts. Anything else ({@code .} alone, {@code +}, a class repeated, a negated class,
 * {@code (?m)}) is not a literal pattern: {@link #of} returns null and re2j decides.
 *
 * <p>Why: re2j simulates the NFA a character at a time, 0.1 to 0.3 us a character on the
 * development machine, so a pattern that must run costs 5 to 40 us on an ordinary message,
 * where these checks cost well under one. The two agree on every message: BundleTest checks
 * them against re2j on every vector's message and on messages made around each text.
 */
final class LiteralPattern {
    private static final int MAX_TEXTS = 256;
    private static final int MAX_TEXT_CHARS = 1024;

    /**
     * One branch: its segments' texts in order (one segment but for a {@code .*}), and where they
     * must be; {@code lengths}, the first segment's text lengths (a lookup by length of a prefix or suffix).
     */
    private record Branch(List<Set<String>> segments, boolean atStart, boolean atEnd, boolean boundaryBefore,
            boolean boundaryAfter, Set<Integer> lengths) {
        Set<String> texts() {
            return segments.get(0);
        }
    }

    private final List<Branch> branches;
    private final boolean caseless;
    private final boolean dotAll;

    private LiteralPattern(List<Branch> branches, boolean caseless, boolean dotAll) {
        this.branches = branches;
        this.caseless = caseless;
        this.dotAll = dotAll;
    }

    /** The literal form of an RE2 pattern; null when it is not one (re2j must decide). */
    static LiteralPattern of(String pattern) {
        Expander x = new Expander(pattern);
        try {
            return x.pattern();
        } catch (NotLiteral e) {
            return null;
        }
    }

    boolean caseless() {
        return caseless;
    }

    /** Every text of every segment (folded for a caseless pattern): what a test builds messages around. */
    Set<String> texts() {
        Set<String> out = new LinkedHashSet<>();
        branches.forEach(b -> b.segments().forEach(out::addAll));
        return out;
    }

    /** Whether the pattern matches {@code message} ({@code folded}: it folded, for a caseless pattern). */
    boolean matches(String message, String folded) {
        String text = caseless ? folded : message;
        for (Branch b : branches) {
            if (b.segments().size() > 1) {
                if (gapped(b, message, text)) {
                    return true;
                }
            } else if (b.atStart() && b.atEnd()) {
                if (b.texts().contains(text) && bounded(b, message, 0, text.length())) {
                    return true;
                }
            } else if (b.atStart() || b.atEnd()) {
                for (int length : b.lengths()) {
                    if (length > text.length()) {
                        continue;
                    }
                    int start = b.atStart() ? 0 : text.length() - length;
                    if (b.texts().contains(text.substring(start, start + length)) && bounded(b, message, start, start + length)) {
                        return true;
                    }
                }
            } else {
                for (String t : b.texts()) {
                    for (int at = text.indexOf(t); at >= 0; at = text.indexOf(t, at + 1)) {
                        if (bounded(b, message, at, at + t.length())) {
                            return true;
                        }
                    }
                }
            }
        }
        return false;
    }

    /**
     * A branch of several segments: on each line (the whole text with {@code (?s)}), the first
     * segment's occurrence that ends first, then the next segment's from there, and so on; the
     * earliest end leaves the most room for what follows, so a line has a match when this finds
     * one. {@code ^} keeps the first line and its start, {@code $} the last line and its end.
     */
    private boolean gapped(Branch b, String message, String text) {
        int n = text.length();
        int lineStart = 0;
        while (lineStart <= n) {
            int lineEnd = dotAll ? n : text.indexOf('\n', lineStart);
            if (lineEnd < 0) {
                lineEnd = n;
            }
            if (!b.atEnd() || lineEnd == n) {
                if (inLine(b, message, text, lineStart, lineEnd)) {
                    return true;
                }
            }
            if (b.atStart() || lineEnd == n) {
                return false;
            }
            lineStart = lineEnd + 1;
        }
        return false;
    }

    private boolean inLine(Branch b, String message, String text, int from, int to) {
        int pos = from;
        List<Set<String>> segments = b.segments();
        for (int k = 0; k < segments.size(); k++) {
            boolean first = k == 0;
            boolean last = k == segments.size() - 1;
            int bestEnd = -1;
            for (String t : segments.get(k)) {
                if (last && b.atEnd()) {
                    int at = to - t.length();
                    if (at >= pos && text.startsWith(t, at) && edges(b, message, at, to, first, true)) {
                        bestEnd = to;
                    }
                    continue;
                }
                if (first && b.atStart()) {
                    if (text.startsWith(t, from) && from + t.length() <= to && edges(b, message, from, from + t.length(), true, last)
                            && (bestEnd < 0 || from + t.length() < bestEnd)) {
                        bestEnd = from + t.length();
                    }
                    continue;
                }
                for (int at = text.indexOf(t, pos); at >= 0 && at + t.length() <= to; at = text.indexOf(t, at + 1)) {
                    if (edges(b, message, at, at + t.length(), first, last)) {
                        if (bestEnd < 0 || at + t.length() < bestEnd) {
                            bestEnd = at + t.length();
                        }
                        break;
                    }
                }
            }
            if (bestEnd < 0) {
                return false;
            }
            pos = bestEnd;
        }
        return true;
    }

    /** The boundaries a branch asks for at its first segment's start and its last segment's end. */
    private static boolean edges(Branch b, String message, int start, int end, boolean first, boolean last) {
        if (first && b.boundaryBefore() && word(message, start - 1) == word(message, start)) {
            return false;
        }
        return !last || !b.boundaryAfter() || word(message, end - 1) != word(message, end);
    }

    /** The word boundaries the branch asks for around [start, end) of the message (RE2's \b: ASCII word characters). */
    private static boolean bounded(Branch b, String message, int start, int end) {
        if (b.boundaryBefore() && word(message, start - 1) == word(message, start)) {
            return false;
        }
        return !b.boundaryAfter() || word(message, end - 1) != word(message, end);
    }

    private static boolean word(String s, int i) {
        if (i < 0 || i >= s.length()) {
            return false;
        }
        char c = s.charAt(i);
        return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_';
    }

    @Override
    public String toString() {
        return (caseless ? "(?i) " : "") + branches;
    }

    private static final class NotLiteral extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotLiteral() {
            super(null, null, false, false);
        }
    }

    /** Expands RE2 syntax into the texts it names; NotLiteral for anything else. */
    private static final class Expander {
        final String p;
        int i;
        boolean caseless;
        boolean dotAll;

        Expander(String p) {
            this.p = p;
        }

        LiteralPattern pattern() {
            if (p.startsWith("(?")) {
                int close = p.indexOf(')');
                String flags = close < 0 ? "" : p.substring(2, close);
                if (!flags.isEmpty() && flags.chars().allMatch(c -> "isU".indexOf(c) >= 0)) {
                    caseless = flags.indexOf('i') >= 0;
                    dotAll = flags.indexOf('s') >= 0;
                    i = close + 1;
                }
            }
            List<Branch> branches = new ArrayList<>();
            int total = 0;
            while (true) {
                Branch b = branch();
                for (Set<String> segment : b.segments()) {
                    total += segment.size();
                }
                if (total > MAX_TEXTS) {
                    throw new NotLiteral();
                }
                branches.add(b);
                if (i < p.length() && p.charAt(i) == '|') {
                    i++;
                    continue;
                }
                break;
            }
            if (i != p.length()) {
                throw new NotLiteral();
            }
            return new LiteralPattern(List.copyOf(branches), caseless, dotAll);
        }

        private Branch branch() {
            boolean atStart = eat("^");
            boolean before = eat("\\b");
            List<Set<String>> segments = new ArrayList<>();
            segments.add(sequence());
            while (eat(".*")) {
                eat("?");
                segments.add(sequence());
            }
            boolean after = eat("\\b");
            boolean atEnd = eat("$");
            if (i < p.length() && p.charAt(i) != '|') {
                throw new NotLiteral();
            }
            for (Set<String> texts : segments) {
                if (texts.contains("") && (segments.size() > 1 || before || after)) {
                    throw new NotLiteral(); // an empty segment, or an empty text at a boundary: re2j's business
                }
            }
            Set<Integer> lengths = new HashSet<>();
            segments.get(0).forEach(t -> lengths.add(t.length()));
            List<Set<String>> frozen = new ArrayList<>();
            segments.forEach(t -> frozen.add(Set.copyOf(t)));
            return new Branch(List.copyOf(frozen), atStart, atEnd, before, after, Set.copyOf(lengths));
        }

        private boolean eat(String token) {
            if (p.startsWith(token, i)) {
                i += token.length();
                return true;
            }
            return false;
        }

        /** Items up to {@code |}, {@code )}, a trailing {@code \b} or {@code $}, or the end. */
        private Set<String> sequence() {
            Set<String> out = new LinkedHashSet<>();
            out.add("");
            while (i < p.length()) {
                char c = p.charAt(i);
                if (c == '|' || c == ')' || c == '$' || p.startsWith("\\b", i) || p.startsWith(".*", i)) {
                    break;
                }
                Set<String> atom = atom();
                int[] range = quantifier();
                if (range != null) {
                    atom = repeated(atom, range[0], range[1]);
                }
                out = product(out, atom);
            }
            return out;
        }

        private Set<String> atom() {
            char c = p.charAt(i);
            if (c == '(') {
                i++;
                if (!eat("?:") && p.startsWith("?", i)) {
                    throw new NotLiteral(); // named groups and flag groups: re2j's business
                }
                Set<String> alternatives = new LinkedHashSet<>();
                while (true) {
                    alternatives.addAll(sequence());
                    check(alternatives);
                    if (eat("|")) {
                        continue;
                    }
                    break;
                }
                if (!eat(")")) {
                    throw new NotLiteral();
                }
                return alternatives;
            }
            if (c == '[') {
                return charClass();
            }
            if (c == '\\') {
                i++;
                if (i >= p.length()) {
                    throw new NotLiteral();
                }
                char d = p.charAt(i++);
                if (d == 'd') {
                    return digits();
                }
                if (d < 0x80 && !Character.isLetterOrDigit(d)) {
                    return Set.of(String.valueOf(d));
                }
                throw new NotLiteral();
            }
            if (c == '.' || c == '^' || c == '*' || c == '+' || c == '?' || c == '{' && repeatAt(i) != null) {
                throw new NotLiteral();
            }
            int cp = p.codePointAt(i);
            i += Character.charCount(cp);
            if (caseless && cp >= 0x80) {
                throw new NotLiteral();
            }
            return Set.of(caseless ? LiteralPrefilter.fold(new String(Character.toChars(cp))) : new String(Character.toChars(cp)));
        }

        private static Set<String> digits() {
            Set<String> out = new LinkedHashSet<>();
            for (char d = '0'; d <= '9'; d++) {
                out.add(String.valueOf(d));
            }
            return out;
        }

        /** A class of ASCII characters and ranges, not negated. */
        private Set<String> charClass() {
            i++;
            if (i < p.length() && p.charAt(i) == '^') {
                throw new NotLiteral();
            }
            Set<String> out = new LinkedHashSet<>();
            boolean first = true;
            while (i < p.length() && (p.charAt(i) != ']' || first)) {
                first = false;
                char lo = member();
                char hi = lo;
                if (i + 1 < p.length() && p.charAt(i) == '-' && p.charAt(i + 1) != ']') {
                    i++;
                    hi = member();
                }
                if (hi < lo || hi - lo > 64) {
                    throw new NotLiteral();
                }
                for (char m = lo; m <= hi; m++) {
                    out.add(caseless ? LiteralPrefilter.fold(String.valueOf(m)) : String.valueOf(m));
                }
            }
            if (!eat("]")) {
                throw new NotLiteral();
            }
            return out;
        }

        private char member() {
            char c = p.charAt(i);
            if (c == '[' && p.startsWith("[:", i)) {
                throw new NotLiteral();
            }
            if (c == '\\') {
                if (i + 1 >= p.length()) {
                    throw new NotLiteral();
                }
                char d = p.charAt(i + 1);
                if (d >= 0x80 || Character.isLetterOrDigit(d)) {
                    throw new NotLiteral();
                }
                i += 2;
                return d;
            }
            if (c >= 0x80) {
                throw new NotLiteral();
            }
            i++;
            return c;
        }

        /** {@code ?} or {@code {n}}, {@code {n,m}} (with an optional lazy {@code ?}); null for none; NotLiteral for {@code *}, {@code +}, {@code {n,}}. */
        private int[] quantifier() {
            if (i >= p.length()) {
                return null;
            }
            char q = p.charAt(i);
            int[] range;
            if (q == '?') {
                i++;
                range = new int[] {0, 1};
            } else if (q == '*' || q == '+') {
                throw new NotLiteral();
            } else if (q == '{' && repeatAt(i) != null) {
                range = repeatAt(i);
                i = p.indexOf('}', i) + 1;
            } else {
                return null;
            }
            eat("?");
            return range;
        }

        private int[] repeatAt(int at) {
            int close = p.indexOf('}', at);
            if (close < 0) {
                return null;
            }
            String body = p.substring(at + 1, close);
            if (!body.matches("[0-9]{1,3}(,[0-9]{0,3})?")) {
                return null;
            }
            String[] parts = body.split(",", -1);
            int lo = Integer.parseInt(parts[0]);
            if (parts.length == 1) {
                return new int[] {lo, lo};
            }
            if (parts[1].isEmpty()) {
                throw new NotLiteral(); // {n,}: unbounded
            }
            return new int[] {lo, Integer.parseInt(parts[1])};
        }

        private Set<String> repeated(Set<String> atom, int min, int max) {
            if (max < min || max > 8) {
                throw new NotLiteral();
            }
            Set<String> out = new LinkedHashSet<>();
            Set<String> power = new LinkedHashSet<>();
            power.add("");
            for (int n = 0; n <= max; n++) {
                if (n >= min) {
                    out.addAll(power);
                }
                if (n < max) {
                    power = product(power, atom);
                }
            }
            check(out);
            return out;
        }

        private Set<String> product(Set<String> a, Set<String> b) {
            if ((long) a.size() * b.size() > MAX_TEXTS) {
                throw new NotLiteral();
            }
            Set<String> out = new LinkedHashSet<>();
            for (String x : a) {
                for (String y : b) {
                    out.add(x + y);
                }
            }
            check(out);
            return out;
        }

        private static void check(Set<String> texts) {
            if (texts.size() > MAX_TEXTS) {
                throw new NotLiteral();
            }
            for (String t : texts) {
                if (t.length() > MAX_TEXT_CHARS) {
                    throw new NotLiteral();
                }
            }
        }
    }
}
