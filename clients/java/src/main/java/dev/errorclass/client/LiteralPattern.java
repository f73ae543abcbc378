package dev.errorclass.client;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A message pattern made of literal texts and character runs, decided without running a regular
 * expression. Most of the library's patterns are such: {@code ^unexpected EOF$}, {@code
 * (?i)content_filter|content_policy_violation|content management policy}, {@code ^(circuit
 * breaker is open|too many requests)$}, {@code ^API returned unexpected status code: 40[13]\b},
 * {@code ^API returned unexpected status code: 400: .*maximum context length}, {@code ^Timed
 * out after \d+ms$}. A branch is an optional {@code ^}, an optional {@code \b}, elements, an
 * optional {@code \b} and an optional {@code $}; an element is either a finite set of texts
 * (literal characters, escaped punctuation, groups of alternatives, {@code ?}, small classes,
 * a counted repetition: expanded once, at load) or a run of one class ({@code .}, {@code \d},
 * {@code \s}, {@code \w}, an ASCII class) repeated between a least and a most count. A branch of
 * one set is a prefix, suffix, equality or substring test; a longer one is decided by the
 * positions each element can end at, from the positions the one before ended at (an exact
 * simulation, linear in the message for each element). Word boundaries are RE2's (ASCII word
 * characters). A case-insensitive pattern compares the folded message ({@link
 * LiteralPrefilter#fold}) with folded texts, and then takes no class with letters.
 *
 * <p>Anything else (a negated class, {@code \pL}, {@code +} on a group, a run inside a group,
 * {@code (?m)}, an inline flag) is not a literal pattern: {@link #of} returns null and re2j
 * decides. Why: re2j simulates the NFA a character at a time, 0.1 to 0.3 us a character on the
 * development machine, so a pattern that must run costs 5 to 40 us on an ordinary message,
 * where these checks cost well under one. The two agree on every message: BundleTest checks
 * them against re2j on every vector's message and on messages made around each text.
 */
final class LiteralPattern {
    private static final int MAX_TEXTS = 256;
    private static final int MAX_TEXT_CHARS = 1024;
    private static final int UNBOUNDED = Integer.MAX_VALUE;

    /** A run of characters of one class, between {@code min} and {@code max} of them (code points). */
    private record Run(boolean[] ascii, boolean any, boolean anyButNewline, int min, int max) {
        boolean accepts(int c) {
            return any || anyButNewline && c != '\n' || c < 128 && ascii != null && ascii[c];
        }

        @Override
        public String toString() {
            return "run{" + min + "," + (max == UNBOUNDED ? "" : max) + "}";
        }
    }

    /**
     * One branch: its elements in order (a {@code Set<String>} of texts, or a {@link Run}), and
     * where they must be; {@code lengths}, a one-set branch's text lengths.
     */
    private record Branch(List<Object> elements, boolean atStart, boolean atEnd, boolean boundaryBefore, boolean boundaryAfter,
            Set<Integer> lengths) {
        @SuppressWarnings("unchecked")
        Set<String> texts() {
            return (Set<String>) elements.get(0);
        }

        boolean simple() {
            return elements.size() == 1 && elements.get(0) instanceof Set<?>;
        }
    }

    private final List<Branch> branches;
    private final boolean caseless;

    private LiteralPattern(List<Branch> branches, boolean caseless) {
        this.branches = branches;
        this.caseless = caseless;
    }

    /** The literal form of an RE2 pattern; null when it is not one (re2j must decide). */
    static LiteralPattern of(String pattern) {
        try {
            return new Expander(pattern).pattern();
        } catch (NotLiteral e) {
            return null;
        }
    }

    boolean caseless() {
        return caseless;
    }

    /** Every text of every set (folded for a caseless pattern): what a test builds messages around. */
    Set<String> texts() {
        Set<String> out = new LinkedHashSet<>();
        for (Branch b : branches) {
            for (Object e : b.elements()) {
                if (e instanceof Set<?> texts) {
                    texts.forEach(t -> out.add((String) t));
                }
            }
        }
        return out;
    }

    /** Whether the pattern matches {@code message} ({@code folded}: it folded, for a caseless pattern). */
    boolean matches(String message, String folded) {
        String text = caseless ? folded : message;
        for (Branch b : branches) {
            if (!b.simple()) {
                if (positions(b, message, text)) {
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
     * A branch of several elements: the positions each element can end at, from those the one
     * before ended at (every position, before the first, when the branch is not anchored).
     */
    private static boolean positions(Branch b, String message, String text) {
        int n = text.length();
        boolean[] from = null; // null: every position
        if (b.atStart()) {
            from = new boolean[n + 1];
            from[0] = true;
        }
        List<Object> elements = b.elements();
        for (int k = 0; k < elements.size(); k++) {
            boolean first = k == 0;
            boolean last = k == elements.size() - 1;
            boolean[] to = new boolean[n + 1];
            boolean any = false;
            if (elements.get(k) instanceof Run run) {
                any = run(run, text, from, to);
            } else {
                for (Object o : (Set<?>) elements.get(k)) {
                    String t = (String) o;
                    for (int at = text.indexOf(t); at >= 0; at = text.indexOf(t, at + 1)) {
                        if ((from == null || from[at]) && (!first || !b.boundaryBefore() || boundary(message, at))
                                && (!last || !b.boundaryAfter() || boundary(message, at + t.length()))) {
                            to[at + t.length()] = true;
                            any = true;
                        }
                    }
                }
            }
            if (!any) {
                return false;
            }
            from = to;
        }
        return !b.atEnd() || from[n];
    }

    /** The positions a run can end at: a run of accepted code points from a start, of min to max of them. */
    private static boolean run(Run run, String text, boolean[] from, boolean[] to) {
        int n = text.length();
        int[] starts = new int[n + 2]; // the code-point counts of the run's possible starts, oldest first
        int head = 0;
        int tail = 0;
        boolean any = false;
        int count = 0;
        int q = 0;
        while (true) {
            if (from == null || from[q]) {
                starts[tail++] = count;
            }
            if (run.max() != UNBOUNDED) {
                while (head < tail && starts[head] < count - run.max()) {
                    head++;
                }
            }
            if (head < tail && starts[head] <= count - run.min()) {
                to[q] = true;
                any = true;
            }
            if (q == n) {
                return any;
            }
            int c = text.codePointAt(q);
            if (!run.accepts(c)) {
                head = tail; // no run goes past this character
            }
            q += Character.charCount(c);
            count++;
        }
    }

    private static boolean bounded(Branch b, String message, int start, int end) {
        return (!b.boundaryBefore() || boundary(message, start)) && (!b.boundaryAfter() || boundary(message, end));
    }

    /** RE2's {@code \b} at a position: an ASCII word character on one side only. */
    private static boolean boundary(String s, int at) {
        return word(s, at - 1) != word(s, at);
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

    /** Reads RE2 syntax into branches of texts and runs; NotLiteral for anything else. */
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
                for (Object e : b.elements()) {
                    total += e instanceof Set<?> texts ? texts.size() : 1;
                }
                if (total > MAX_TEXTS) {
                    throw new NotLiteral();
                }
                branches.add(b);
                if (eat("|")) {
                    continue;
                }
                break;
            }
            if (i != p.length()) {
                throw new NotLiteral();
            }
            return new LiteralPattern(List.copyOf(branches), caseless);
        }

        private Branch branch() {
            boolean atStart = eat("^");
            boolean before = eat("\\b");
            List<Object> elements = sequence(false);
            boolean after = eat("\\b");
            boolean atEnd = eat("$");
            if (i < p.length() && p.charAt(i) != '|') {
                throw new NotLiteral();
            }
            boolean simple = elements.size() == 1 && elements.get(0) instanceof Set<?>;
            for (Object e : elements) {
                if (e instanceof Set<?> texts && texts.contains("") && (!simple || before || after)) {
                    throw new NotLiteral(); // an empty text among runs, or at a boundary: re2j's business
                }
            }
            if ((before && !(elements.get(0) instanceof Set<?>)) || (after && !(elements.get(elements.size() - 1) instanceof Set<?>))) {
                throw new NotLiteral(); // a boundary next to a run
            }
            Set<Integer> lengths = new HashSet<>();
            if (simple) {
                for (Object t : (Set<?>) elements.get(0)) {
                    lengths.add(((String) t).length());
                }
            }
            return new Branch(List.copyOf(elements), atStart, atEnd, before, after, Set.copyOf(lengths));
        }

        private boolean eat(String token) {
            if (p.startsWith(token, i)) {
                i += token.length();
                return true;
            }
            return false;
        }

        /**
         * Atoms up to {@code |}, {@code )}, a trailing {@code \b} or {@code $}, or the end: adjacent
         * texts joined into one set, runs between them. Inside a group, a single set.
         */
        private List<Object> sequence(boolean inGroup) {
            List<Object> out = new ArrayList<>();
            Set<String> texts = new LinkedHashSet<>();
            texts.add("");
            while (i < p.length()) {
                char c = p.charAt(i);
                if (c == '|' || c == ')' || c == '$' || p.startsWith("\\b", i)) {
                    break;
                }
                Object atom = atom();
                int[] range = quantifier();
                if (atom instanceof Run run) {
                    Run repeated = range == null ? run : new Run(run.ascii(), run.any(), run.anyButNewline(), range[0], range[1]);
                    Set<String> finite = run.any() || run.anyButNewline() ? null : expand(repeated);
                    if (finite == null && inGroup) {
                        throw new NotLiteral();
                    }
                    if (finite != null && (long) texts.size() * finite.size() <= MAX_TEXTS) {
                        texts = product(texts, finite);
                        continue;
                    }
                    if (inGroup) {
                        throw new NotLiteral();
                    }
                    out.add(Set.copyOf(texts));
                    out.add(repeated);
                    texts = new LinkedHashSet<>();
                    texts.add("");
                    continue;
                }
                @SuppressWarnings("unchecked")
                Set<String> set = (Set<String>) atom;
                if (range != null) {
                    if (range[1] == UNBOUNDED) {
                        throw new NotLiteral();
                    }
                    set = repeated(set, range[0], range[1]);
                }
                texts = product(texts, set);
            }
            if (inGroup) {
                return List.of(texts);
            }
            out.add(Set.copyOf(texts));
            // Drop the empty sets runs left at the ends or between runs ({""} needs nothing).
            List<Object> cleaned = new ArrayList<>();
            for (Object e : out) {
                if (!(e instanceof Set<?> s && s.size() == 1 && s.contains(""))) {
                    cleaned.add(e);
                }
            }
            if (cleaned.isEmpty()) {
                cleaned.add(Set.of(""));
            }
            return cleaned;
        }

        /** A class run's texts when it is small (a bounded run of an ASCII class); null otherwise. */
        private static Set<String> expand(Run run) {
            if (run.max() == UNBOUNDED || run.max() > 8) {
                return null;
            }
            Set<String> one = new LinkedHashSet<>();
            for (char c = 0; c < 128; c++) {
                if (run.ascii()[c]) {
                    one.add(String.valueOf(c));
                }
            }
            long size = 1;
            for (int k = 0; k < run.max(); k++) {
                size *= Math.max(1, one.size());
                if (size > MAX_TEXTS) {
                    return null;
                }
            }
            Set<String> out = new LinkedHashSet<>();
            Set<String> power = new LinkedHashSet<>();
            power.add("");
            for (int k = 0; k <= run.max(); k++) {
                if (k >= run.min()) {
                    out.addAll(power);
                }
                if (k < run.max()) {
                    Set<String> next = new LinkedHashSet<>();
                    for (String a : power) {
                        for (String b : one) {
                            next.add(a + b);
                        }
                    }
                    power = next;
                }
            }
            return out.size() > MAX_TEXTS ? null : out;
        }

        /** A set of texts, or a {@link Run} of one character class. */
        private Object atom() {
            char c = p.charAt(i);
            if (c == '(') {
                i++;
                if (!eat("?:") && p.startsWith("?", i)) {
                    throw new NotLiteral(); // named groups and flag groups: re2j's business
                }
                Set<String> alternatives = new LinkedHashSet<>();
                while (true) {
                    @SuppressWarnings("unchecked")
                    Set<String> alt = (Set<String>) sequence(true).get(0);
                    alternatives.addAll(alt);
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
            if (c == '.') {
                i++;
                return new Run(null, dotAll, !dotAll, 1, 1);
            }
            if (c == '\\') {
                i++;
                if (i >= p.length()) {
                    throw new NotLiteral();
                }
                char d = p.charAt(i++);
                if (d == 'd' || d == 's' || d == 'w') {
                    boolean[] set = new boolean[128];
                    String members = d == 'd' ? "0123456789" : d == 's' ? "\t\n\f\r " : WORD;
                    members.chars().forEach(m -> set[m] = true);
                    if (caseless && d == 'w') {
                        throw new NotLiteral();
                    }
                    return new Run(set, false, false, 1, 1);
                }
                if (d < 0x80 && !Character.isLetterOrDigit(d)) {
                    return Set.of(String.valueOf(d));
                }
                throw new NotLiteral();
            }
            if (c == '^' || c == '*' || c == '+' || c == '?' || c == '{' && repeatAt(i) != null) {
                throw new NotLiteral();
            }
            int cp = p.codePointAt(i);
            i += Character.charCount(cp);
            if (caseless && cp >= 0x80) {
                throw new NotLiteral();
            }
            String s = new String(Character.toChars(cp));
            return Set.of(caseless ? LiteralPrefilter.fold(s) : s);
        }

        private static final String WORD = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_";

        /** A class of ASCII characters and ranges, not negated; caseless, without letters. */
        private Run charClass() {
            i++;
            if (i < p.length() && p.charAt(i) == '^') {
                throw new NotLiteral();
            }
            boolean[] set = new boolean[128];
            boolean first = true;
            while (i < p.length() && (p.charAt(i) != ']' || first)) {
                first = false;
                char lo = member();
                char hi = lo;
                if (i + 1 < p.length() && p.charAt(i) == '-' && p.charAt(i + 1) != ']') {
                    i++;
                    hi = member();
                }
                if (hi < lo) {
                    throw new NotLiteral();
                }
                for (char m = lo; m <= hi; m++) {
                    if (caseless && Character.isLetter(m)) {
                        throw new NotLiteral(); // RE2 folds a caseless class, the Kelvin sign and long s too
                    }
                    set[m] = true;
                }
            }
            if (!eat("]")) {
                throw new NotLiteral();
            }
            return new Run(set, false, false, 1, 1);
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

        /** {@code ?}, {@code *}, {@code +} or a counted repetition (with an optional lazy {@code ?}) as {min, max}; null for none. */
        private int[] quantifier() {
            if (i >= p.length()) {
                return null;
            }
            char q = p.charAt(i);
            int[] range;
            if (q == '?') {
                i++;
                range = new int[] {0, 1};
            } else if (q == '*') {
                i++;
                range = new int[] {0, UNBOUNDED};
            } else if (q == '+') {
                i++;
                range = new int[] {1, UNBOUNDED};
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
            int hi = parts[1].isEmpty() ? UNBOUNDED : Integer.parseInt(parts[1]);
            if (hi < lo) {
                throw new NotLiteral();
            }
            return new int[] {lo, hi};
        }

        private Set<String> repeated(Set<String> atom, int min, int max) {
            if (max > 8) {
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
