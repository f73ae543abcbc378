package dev.errorclass.client;

import java.util.Comparator;

/**
 * Text as the service counts it (clients/spec/README.md, "Counting"): characters are Unicode
 * code points, never UTF-16 units, so a surrogate pair is one character and a cut never
 * splits one; bytes are UTF-8 bytes; "stripped" removes {@link Facts#WHITESPACE} (Python's
 * {@code str.isspace}), which {@code String.strip} does not match (it keeps U+0085, U+00A0,
 * U+2007 and U+202F).
 */
final class Text {
    private Text() {}

    /** Code-point order, which {@code String.compareTo} (UTF-16 order) is not past U+FFFF. */
    static final Comparator<String> CODE_POINT_ORDER = (a, b) -> {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i);
            int y = b.codePointAt(j);
            if (x != y) {
                return Integer.compare(x, y);
            }
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    };

    static boolean isSpace(int codePoint) {
        return codePoint <= 0xFFFF && Facts.WHITESPACE.indexOf(codePoint) >= 0;
    }

    /** {@code text} without the facts' whitespace at either end; "" for null. */
    static String strip(String text) {
        if (text == null) {
            return "";
        }
        int start = 0;
        int end = text.length();
        while (start < end && isSpace(text.charAt(start))) {
            start++;
        }
        while (end > start && isSpace(text.charAt(end - 1))) {
            end--;
        }
        return text.substring(start, end);
    }

    /** How many characters (code points) {@code text} holds. */
    static int length(String text) {
        return text.codePointCount(0, text.length());
    }

    /** The first {@code limit} characters of {@code text}: a surrogate pair is one, never split. */
    static String cut(String text, int limit) {
        if (text == null) {
            return "";
        }
        if (text.length() <= limit) {
            return text;
        }
        if (length(text) <= limit) {
            return text;
        }
        return text.substring(0, text.offsetByCodePoints(0, limit));
    }

    /** {@code text} with each lone surrogate replaced by U+FFFD, as the service stores it. */
    static String wellFormed(String text) {
        if (text == null) {
            return "";
        }
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean lone;
            if (Character.isHighSurrogate(c)) {
                lone = i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1));
                if (!lone) {
                    if (out != null) {
                        out.append(c).append(text.charAt(i + 1));
                    }
                    i++;
                    continue;
                }
            } else {
                lone = Character.isLowSurrogate(c);
            }
            if (lone && out == null) {
                out = new StringBuilder(text.length()).append(text, 0, i);
            }
            if (out != null) {
                out.append(lone ? '\uFFFD' : c);
            }
        }
        return out == null ? text : out.toString();
    }

    /** How many UTF-8 bytes {@code text} takes (a lone surrogate, which has none, as U+FFFD's 3). */
    static long utf8Length(String text) {
        long n = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }
}
