package dev.errorclass.client;

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
