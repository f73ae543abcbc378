package dev.errorclass.client;

import com.google.re2j.Pattern;
import java.nio.CharBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A necessary condition for a message pattern to match, read from the pattern's literal text,
 * so that the evaluator runs re2j only on messages that could match. re2j simulates the NFA one
 * character at a time (no DFA, and no literal skip for a case-insensitive or anchored pattern):
 * on the bundled library, the descriptors whose type has a dozen message rules (Go's {@code
 * *errors.errorString}) took 30 to 45 us each, nearly all of it in patterns that could not match
 * for want of a word they require.
 *
 * <p>The condition is a disjunction of clauses, each a set of literal strings that must all occur
 * in the message ({@code ^API returned ...: 400: .*maximum context length} needs the message to
 * start with {@code "API returned ...: 400: "} and to hold {@code "maximum context length"}); a
 * top-level alternation or a group's gives one clause per alternative. It is conservative: a
 * construct it does not read (a class, an escape that is not a literal, a repetition that may be
 * absent) requires nothing, a pattern it cannot read has no prefilter ({@link #of} returns null),
 * and a case-insensitive pattern ({@code (?i)}, RE2's simple folding of ASCII letters, where K
 * also matches the Kelvin sign and s the long s) compares a folded message with folded literals.
 */
final class LiteralPrefilter {
    private static final int MAX_CLAUSES = 16;

    /** One literal a clause needs: anywhere in the message, or at its start ({@code ^literal}). */
    record Need(String text, boolean atStart) {}

    private final Need[][] clauses;
    private final boolean caseless;

    private LiteralPrefilter(List<List<Need>> clauses, boolean caseless) {
        this.clauses = new Need[clauses.size()][];
        for (int i = 0; i < this.clauses.length; i++) {
            this.clauses[i] = clauses.get(i).toArray(new Need[0]);
        }
        this.caseless = caseless;
    }

    /** The prefilter of an RE2 pattern; null when it requires nothing or cannot be read. */
    static LiteralPrefilter of(String pattern) {
        Parser parser = new Parser(pattern);
        List<List<Need>> dnf;
        try {
            dnf = parser.pattern();
        } catch (Bail e) {
            return null;
        }
        return dnf == null ? null : new LiteralPrefilter(dnf, parser.caseless);
    }

    /** Whether the pattern is case-insensitive, and so {@link #mayMatch} reads the folded message. */
    boolean caseless() {
        return caseless;
    }

    /** False only when the pattern cannot match {@code message} ({@code folded}: it {@link #fold}ed, for a caseless pattern). */
    boolean mayMatch(String message, String folded) {
        String text = caseless ? folded : message;
        for (Need[] clause : clauses) {
            boolean all = true;
            for (Need need : clause) {
                if (need.atStart() ? !text.startsWith(need.text()) : !text.contains(need.text())) {
                    all = false;
                    break;
                }
            }
            if (all) {
                return true;
            }
        }
        return false;
    }

    /** ASCII letters lower-cased, the Kelvin sign as k and the long s as s: RE2's {@code (?i)} orbits of ASCII letters. */
    static String fold(String text) {
        char[] out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            char f = c >= 'A' && c <= 'Z' ? (char) (c + 32) : c == '\u212A' ? 'k' : c == '\u017F' ? 's' : c;
            if (f != c) {
                if (out == null) {
                    out = text.toCharArray();
                }
                out[i] = f;
            }
        }
        return out == null ? text : new String(out);
    }

    /**
     * A search for a pattern every match of which begins with one of a few literals (after
     * {@code \b} or {@code \B}, perhaps): re2j runs the pattern only where one of them is,
     * anchored there ({@code lookingAt}), where it would step its NFA through every character of
     * the message. The run starts a character early when the one before is ASCII ({@code
     * (?s:.)} consumes it), so that a {@code \b} or {@code \B} reads it as the whole message's
     * would; a character that is not ASCII reads as the start of the text does (no word
     * character). A pattern {@code ^L.*R} (L literal) is R searched from the end of L to the end
     * of L's line (the message's end under {@code (?s)}). A caseless pattern's literals are found
     * in the folded message ({@link #fold}), which is as long as the message. The slowest
     * descriptors of the library were such: {@code ^API returned unexpected status code: 429:
     * .*(\bper (day|month)\b|...)} cost ~19 us on a 193-character message.
     */
    static final class Search {
        private static final int MAX_FIRSTS = 16;

        private final String[] firsts;
        private final boolean caseless;
        private final String prefix; // L, when the pattern is ^L.*R; else null
        private final boolean anyLine; // the .* of ^L.*R crosses lines ((?s))
        private final Pattern anchored; // (?flags)(?:R), run with lookingAt
        private final Pattern after; // (?flags)(?s:.)(?:R), run with lookingAt from the character before

        private Search(String[] firsts, boolean caseless, String prefix, boolean anyLine, Pattern anchored, Pattern after) {
            this.firsts = firsts;
            this.caseless = caseless;
            this.prefix = prefix;
            this.anyLine = anyLine;
            this.anchored = anchored;
            this.after = after;
        }

        /** The search of an RE2 pattern (one re2j compiled); null when no few literals begin every match. */
        static Search of(String pattern) {
            String flags = "";
            String r = pattern;
            int close = r.indexOf(')');
            if (r.startsWith("(?") && close > 2 && r.substring(2, close).chars().allMatch(Character::isLetter)) {
                flags = r.substring(2, close);
                if (!flags.chars().allMatch(c -> c == 'i' || c == 's')) {
                    return null; // (?m), (?U): left to re2j
                }
                r = r.substring(close + 1);
            }
            boolean caseless = flags.indexOf('i') >= 0;
            String prefix = null;
            if (r.startsWith("^")) {
                int dot = r.indexOf(".*");
                String literal = dot < 0 ? null : plain(r.substring(1, dot));
                if (literal == null || literal.isEmpty() || r.startsWith("?", dot + 2)) {
                    return null;
                }
                prefix = caseless ? fold(literal) : literal;
                r = r.substring(dot + 2);
            }
            List<String> out = new ArrayList<>();
            try {
                firsts(r, out);
                if (out.isEmpty() || out.size() > MAX_FIRSTS || beginsAnywhere(r)) {
                    return null;
                }
            } catch (Bail e) {
                return null;
            }
            String head = flags.isEmpty() ? "" : "(?" + flags + ")";
            return new Search(out.stream().map(t -> caseless ? fold(t) : t).toArray(String[]::new), caseless, prefix,
                    flags.indexOf('s') >= 0, Pattern.compile(head + "(?:" + r + ")"), Pattern.compile(head + "(?s:.)(?:" + r + ")"));
        }

        /** Whether the pattern is case-insensitive, and so {@link #find} reads the folded message. */
        boolean caseless() {
            return caseless;
        }

        /** Whether the pattern matches {@code message} ({@code folded}: it {@link #fold}ed, for a caseless pattern). */
        boolean find(String message, String folded) {
            String text = caseless ? folded : message;
            int from = 0;
            int to = message.length(); // where a match of R may begin
            if (prefix != null) {
                if (!text.startsWith(prefix)) {
                    return false;
                }
                from = prefix.length();
                int line = anyLine ? -1 : message.indexOf('\n', from);
                if (line >= 0) {
                    to = line;
                }
            }
            for (String first : firsts) {
                for (int at = text.indexOf(first, from); at >= 0 && at <= to; at = text.indexOf(first, at + 1)) {
                    boolean found = at > 0 && message.charAt(at - 1) < 0x80
                            ? after.matcher(CharBuffer.wrap(message, at - 1, message.length())).lookingAt()
                            : anchored.matcher(CharBuffer.wrap(message, at, message.length())).lookingAt();
                    if (found) {
                        return true;
                    }
                }
            }
            return false;
        }

        /** The literal text of a pattern fragment made only of literal characters (escaped punctuation); else null. */
        private static String plain(String fragment) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < fragment.length(); i++) {
                char c = fragment.charAt(i);
                if (c == '\\' && i + 1 < fragment.length() && fragment.charAt(i + 1) < 0x80
                        && !Character.isLetterOrDigit(fragment.charAt(i + 1))) {
                    b.append(fragment.charAt(++i));
                } else if (c < 0x80 && "\\.[]()|*+?{}^$".indexOf(c) < 0) {
                    b.append(c);
                } else {
                    return null;
                }
            }
            return b.toString();
        }

        /**
         * Adds the literals one of which begins every match of {@code r}: per alternative, after
         * any {@code \b} or {@code \B}, the literal characters it begins with, or the literals of
         * the group it begins with (one that must occur). Throws {@link Bail} when an alternative
         * begins otherwise.
         */
        private static void firsts(String r, List<String> out) {
            for (String alt : alternatives(r)) {
                int i = 0;
                while (alt.startsWith("\\b", i) || alt.startsWith("\\B", i)) {
                    i += 2;
                }
                if (alt.startsWith("(", i)) {
                    int close = closing(alt, i);
                    if (close + 1 < alt.length() && "?*{".indexOf(alt.charAt(close + 1)) >= 0) {
                        throw new Bail();
                    }
                    String body = alt.substring(i + 1, close);
                    if (body.startsWith("?:")) {
                        body = body.substring(2);
                    } else if (body.startsWith("?")) {
                        throw new Bail(); // a named group or flags: left to re2j
                    }
                    firsts(body, out);
                    continue;
                }
                StringBuilder run = new StringBuilder();
                while (i < alt.length()) {
                    char c = alt.charAt(i);
                    if (c == '\\' && i + 1 < alt.length() && alt.charAt(i + 1) < 0x80 && !Character.isLetterOrDigit(alt.charAt(i + 1))) {
                        run.append(alt.charAt(i + 1));
                        i += 2;
                    } else if (c < 0x80 && "\\.[]()|*+?{}^$".indexOf(c) < 0) {
                        run.append(c);
                        i++;
                    } else {
                        break;
                    }
                }
                if (i < alt.length() && "?*+{".indexOf(alt.charAt(i)) >= 0 && run.length() > 0) {
                    run.setLength(run.length() - 1); // the last character is repeated, perhaps absent
                }
                if (run.length() == 0) {
                    throw new Bail();
                }
                out.add(run.toString());
            }
        }

        /** The top-level alternatives of a pattern fragment. */
        private static List<String> alternatives(String r) {
            List<String> out = new ArrayList<>();
            int depth = 0;
            int start = 0;
            for (int i = 0; i < r.length(); i++) {
                char c = r.charAt(i);
                if (c == '\\') {
                    i++;
                } else if (c == '[') {
                    i = classEnd(r, i);
                } else if (c == '(') {
                    depth++;
                } else if (c == ')') {
                    depth--;
                } else if (c == '|' && depth == 0) {
                    out.add(r.substring(start, i));
                    start = i + 1;
                }
            }
            out.add(r.substring(start));
            return out;
        }

        /** The index of the {@code )} that closes the group opened at {@code open}. */
        private static int closing(String r, int open) {
            int depth = 0;
            for (int i = open; i < r.length(); i++) {
                char c = r.charAt(i);
                if (c == '\\') {
                    i++;
                } else if (c == '[') {
                    i = classEnd(r, i);
                } else if (c == '(') {
                    depth++;
                } else if (c == ')' && --depth == 0) {
                    return i;
                }
            }
            throw new Bail();
        }

        /** The index of the {@code ]} that closes the class opened at {@code open}. */
        private static int classEnd(String r, int open) {
            int i = open + 1;
            if (i < r.length() && r.charAt(i) == '^') {
                i++;
            }
            if (i < r.length() && r.charAt(i) == ']') {
                i++;
            }
            for (; i < r.length(); i++) {
                char c = r.charAt(i);
                if (c == '\\') {
                    i++;
                } else if (c == '[' && r.startsWith("[:", i)) {
                    int end = r.indexOf(":]", i + 2);
                    if (end < 0) {
                        throw new Bail();
                    }
                    i = end + 1;
                } else if (c == ']') {
                    return i;
                }
            }
            throw new Bail();
        }

        /** Whether a fragment holds {@code ^} or {@code \A} outside a class, which a text cut short would read otherwise; or anything not read here ({@code \Q}). */
        private static boolean beginsAnywhere(String r) {
            for (int i = 0; i < r.length(); i++) {
                char c = r.charAt(i);
                if (c == '\\') {
                    if (i + 1 < r.length() && "AQ".indexOf(r.charAt(i + 1)) >= 0) {
                        return true;
                    }
                    i++;
                } else if (c == '[') {
                    i = classEnd(r, i);
                } else if (c == '^') {
                    return true;
                }
            }
            return false;
        }
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(caseless ? "(?i) " : "");
        for (int i = 0; i < clauses.length; i++) {
            b.append(i == 0 ? "" : " | ").append(List.of(clauses[i]));
        }
        return b.toString();
    }

    /** A construct the parser does not read: the pattern gets no prefilter. */
    private static final class Bail extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Bail() {
            super(null, null, false, false);
        }
    }

    /**
     * Reads RE2 syntax (the portable subset, docs/rules.md) into clauses; null stands for "no
     * requirement". The pattern compiled in re2j already, so its syntax is valid.
     */
    private static final class Parser {
        final String p;
        int i;
        boolean caseless;
        boolean multiline;

        Parser(String p) {
            this.p = p;
        }

        List<List<Need>> pattern() {
            if (p.startsWith("(?")) {
                int close = p.indexOf(')');
                String flags = close < 0 ? "" : p.substring(2, close);
                if (!flags.isEmpty() && flags.chars().allMatch(c -> "imsU".indexOf(c) >= 0)) {
                    caseless = flags.indexOf('i') >= 0;
                    multiline = flags.indexOf('m') >= 0;
                    i = close + 1;
                }
            }
            List<List<Need>> dnf = alternation(true);
            if (i != p.length()) {
                throw new Bail();
            }
            return dnf;
        }

        /** Alternatives up to a {@code )} or the end: the union of their clauses; null when one needs nothing. */
        List<List<Need>> alternation(boolean top) {
            List<List<Need>> out = new ArrayList<>();
            boolean free = false;
            while (true) {
                List<List<Need>> alt = concatenation(top);
                if (alt == null) {
                    free = true;
                } else {
                    out.addAll(alt);
                }
                if (i < p.length() && p.charAt(i) == '|') {
                    i++;
                    continue;
                }
                break;
            }
            return free || out.isEmpty() || out.size() > MAX_CLAUSES ? null : out;
        }

        /** One alternative: the clauses its literals and required groups give; null when it needs nothing. */
        private List<List<Need>> concatenation(boolean top) {
            List<List<Need>> cur = new ArrayList<>();
            cur.add(new ArrayList<>());
            StringBuilder run = new StringBuilder();
            boolean runAtStart = false;
            boolean first = true;
            while (i < p.length() && p.charAt(i) != '|' && p.charAt(i) != ')') {
                int c = p.codePointAt(i);
                if (c == '^') {
                    i++;
                    cur = flush(cur, run, runAtStart);
                    runAtStart = first && top && !multiline;
                    first = false;
                    continue;
                }
                first = false;
                if (c == '$') {
                    i++;
                    cur = flush(cur, run, runAtStart);
                    runAtStart = false;
                    continue;
                }
                int literal = -1;
                List<List<Need>> group = null;
                if (c == '(') {
                    group = group();
                } else if (c == '[') {
                    skipClass();
                } else if (c == '.') {
                    i++;
                } else if (c == '\\') {
                    literal = escape();
                    if (literal == -2) { // zero-width: \b \B \A \z
                        cur = flush(cur, run, runAtStart);
                        runAtStart = false;
                        continue;
                    }
                } else if (c == '*' || c == '+' || c == '?' || c == '{' && repeat(i) >= 0) {
                    throw new Bail();
                } else {
                    literal = c;
                    i += Character.charCount(c);
                }
                int min = quantifier();
                if (literal >= 0 && (!caseless || literal < 0x80)) {
                    if (min != 0) {
                        run.appendCodePoint(caseless ? fold(literal) : literal);
                    }
                    if (min != 1 || quantified) {
                        cur = flush(cur, run, runAtStart);
                        runAtStart = false;
                    }
                    continue;
                }
                cur = flush(cur, run, runAtStart);
                runAtStart = false;
                if (group != null && min != 0) {
                    cur = and(cur, group);
                }
            }
            cur = flush(cur, run, runAtStart);
            for (List<Need> clause : cur) {
                if (clause.isEmpty()) {
                    return null;
                }
            }
            return cur;
        }

        private static int fold(int c) {
            return c >= 'A' && c <= 'Z' ? c + 32 : c;
        }

        /** Whether the atom just read had a quantifier (set by {@link #quantifier}). */
        private boolean quantified;

        /** The least repetitions of the quantifier after an atom (1 without one), consumed with a lazy {@code ?}. */
        private int quantifier() {
            quantified = false;
            if (i >= p.length()) {
                return 1;
            }
            char q = p.charAt(i);
            int min;
            if (q == '*' || q == '?') {
                min = 0;
                i++;
            } else if (q == '+') {
                min = 1;
                i++;
            } else if (q == '{' && repeat(i) >= 0) {
                min = repeat(i);
                i = p.indexOf('}', i) + 1;
            } else {
                return 1;
            }
            quantified = true;
            if (i < p.length() && p.charAt(i) == '?') {
                i++;
            }
            return min;
        }

        /** The minimum of a repetition {@code {n}}, {@code {n,}} or {@code {n,m}} at {@code at}; -1 when it is a literal brace. */
        private int repeat(int at) {
            int close = p.indexOf('}', at);
            if (close < 0) {
                return -1;
            }
            String body = p.substring(at + 1, close);
            if (!body.matches("[0-9]+(,[0-9]*)?")) {
                return -1;
            }
            String n = body.split(",", -1)[0];
            return n.length() > 4 ? Integer.MAX_VALUE : Integer.parseInt(n);
        }

        /** A group: its alternatives' clauses, null for a flag group (another case rule) or one that needs nothing. */
        private List<List<Need>> group() {
            i++;
            boolean flagged = false;
            if (p.startsWith("?", i)) {
                if (p.startsWith("?:", i)) {
                    i += 2;
                } else if (p.startsWith("?P<", i) || p.startsWith("?<", i)) {
                    i = p.indexOf('>', i) + 1;
                    if (i == 0) {
                        throw new Bail();
                    }
                } else {
                    int j = i + 1;
                    while (j < p.length() && "imsU-".indexOf(p.charAt(j)) >= 0) {
                        j++;
                    }
                    if (j >= p.length() || p.charAt(j) != ':') {
                        throw new Bail(); // (?i) in the middle of a pattern: the case rule changes
                    }
                    flagged = true;
                    i = j + 1;
                }
            }
            List<List<Need>> inner = alternation(false);
            if (i >= p.length() || p.charAt(i) != ')') {
                throw new Bail();
            }
            i++;
            return flagged ? null : inner;
        }

        /** Skips a character class {@code [...]}. */
        private void skipClass() {
            i++;
            if (i < p.length() && p.charAt(i) == '^') {
                i++;
            }
            if (i < p.length() && p.charAt(i) == ']') {
                i++;
            }
            while (i < p.length() && p.charAt(i) != ']') {
                if (p.startsWith("[:", i)) {
                    int end = p.indexOf(":]", i + 2);
                    if (end < 0) {
                        throw new Bail();
                    }
                    i = end + 2;
                } else if (p.charAt(i) == '\\') {
                    i++;
                    skipEscapeBody();
                } else {
                    i++;
                }
            }
            if (i >= p.length()) {
                throw new Bail();
            }
            i++;
        }

        /** After a backslash inside a class: the escape's rest. */
        private void skipEscapeBody() {
            if (i >= p.length()) {
                throw new Bail();
            }
            char d = p.charAt(i);
            if ((d == 'p' || d == 'P' || d == 'x') && p.startsWith("{", i + 1)) {
                int end = p.indexOf('}', i);
                if (end < 0) {
                    throw new Bail();
                }
                i = end + 1;
            } else if (d == 'x') {
                i += 3;
            } else if (d == 'p' || d == 'P') {
                i += 2;
            } else if (d >= '0' && d <= '7') {
                i++;
                for (int k = 0; k < 2 && i < p.length() && p.charAt(i) >= '0' && p.charAt(i) <= '7'; k++) {
                    i++;
                }
            } else if (d == 'Q' || d == 'E' || d == 'C') {
                throw new Bail();
            } else {
                i += Character.charCount(p.codePointAt(i));
            }
        }

        /**
         * An escape outside a class: the literal character it stands for (escaped punctuation),
         * -2 for a zero-width assertion, -1 for anything else (a class, a control character).
         */
        private int escape() {
            i++;
            if (i >= p.length()) {
                throw new Bail();
            }
            char d = p.charAt(i);
            if (d < 0x80 && !Character.isLetterOrDigit(d)) {
                i++;
                return d;
            }
            if ("AbBz".indexOf(d) >= 0) {
                i++;
                return -2;
            }
            skipEscapeBody();
            return -1;
        }

        /** Each clause of cur with the run added (the run then empty). */
        private List<List<Need>> flush(List<List<Need>> cur, StringBuilder run, boolean atStart) {
            if (run.length() == 0) {
                return cur;
            }
            Need need = new Need(run.toString(), atStart);
            run.setLength(0);
            for (List<Need> clause : cur) {
                clause.add(need);
            }
            return cur;
        }

        /** cur and a group's clauses: every pair joined; past {@link #MAX_CLAUSES}, cur alone (a weaker condition). */
        private static List<List<Need>> and(List<List<Need>> cur, List<List<Need>> group) {
            if (group == null || cur.size() * group.size() > MAX_CLAUSES) {
                return cur;
            }
            List<List<Need>> out = new ArrayList<>();
            for (List<Need> a : cur) {
                for (List<Need> b : group) {
                    List<Need> joined = new ArrayList<>(a);
                    joined.addAll(b);
                    out.add(joined);
                }
            }
            return out;
        }
    }
}
