package dev.errorclass.client;

import dev.errorclass.v1.Cause;
import dev.errorclass.v1.ExceptionDescriptor;
import dev.errorclass.v1.Origin;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The service's limits, applied two ways (clients/spec/README.md, {@code fit} and
 * {@code validate}; the vectors of fit.json and validate.json prove both):
 *
 * <ul>
 *   <li>{@link #fit}: what a builder sends, cut to the limits so that it is never refused.
 *   <li>{@link #validate}: what the service makes of a descriptor: the normalised descriptor,
 *       or every refused field by its path ({@code descriptor.causes[1].type}), with the
 *       service's own wording (classifier/descriptor.py).
 * </ul>
 */
final class Limits {
    private static final String PREFIX = "descriptor";

    private Limits() {}

    // ---- fit ----

    static ExceptionDescriptor fit(ExceptionDescriptor d) {
        ExceptionDescriptor.Builder out = ExceptionDescriptor.newBuilder()
                .setType(name(d.getType()))
                .addAllSupertypes(names(d.getSupertypesList()))
                .setOriginValue(Origin.forNumber(d.getOriginValue()) == null ? 0 : d.getOriginValue())
                .setCode(Text.cut(Text.strip(d.getCode()), Facts.MAX_CODE_CHARS))
                .setMessage(message(d.getMessage()))
                .setLanguage(label(d.getLanguage()))
                .setProvider(label(d.getProvider()));
        if (d.hasHttpStatus() && httpStatus(d.getHttpStatus())) {
            out.setHttpStatus(d.getHttpStatus());
        }
        if (d.hasGrpcStatus() && grpcStatus(d.getGrpcStatus())) {
            out.setGrpcStatus(d.getGrpcStatus());
        }
        for (Cause c : d.getCausesList()) {
            if (out.getCausesCount() == Facts.MAX_CAUSES) {
                break;
            }
            String type = name(c.getType());
            if (type.isEmpty()) {
                continue;
            }
            Cause.Builder cause = Cause.newBuilder()
                    .setType(type)
                    .addAllSupertypes(names(c.getSupertypesList()))
                    .setCode(Text.cut(Text.strip(c.getCode()), Facts.MAX_CODE_CHARS))
                    .setMessage(message(c.getMessage()));
            if (c.hasHttpStatus() && httpStatus(c.getHttpStatus())) {
                cause.setHttpStatus(c.getHttpStatus());
            }
            if (c.hasGrpcStatus() && grpcStatus(c.getGrpcStatus())) {
                cause.setGrpcStatus(c.getGrpcStatus());
            }
            out.addCauses(cause);
        }
        out.putAllAttributes(attributes(d.getAttributesMap()));
        return out.build();
    }

    /** Stripped and cut to MAX_TYPE_NAME_CHARS. */
    static String name(String text) {
        return Text.cut(Text.strip(text), Facts.MAX_TYPE_NAME_CHARS);
    }

    /** Each stripped, the empty ones dropped, the first MAX_SUPERTYPES kept, each cut. */
    static List<String> names(List<String> names) {
        List<String> out = new ArrayList<>();
        for (String n : names) {
            if (out.size() == Facts.MAX_SUPERTYPES) {
                break;
            }
            String s = name(n);
            if (!s.isEmpty()) {
                out.add(s);
            }
        }
        return out;
    }

    /** Lone surrogates replaced, then cut to MAX_MESSAGE_CHARS. */
    static String message(String text) {
        return Text.cut(Text.wellFormed(text), Facts.MAX_MESSAGE_CHARS);
    }

    /** A language or provider: stripped, lower-cased, cut to MAX_LABEL_CHARS. */
    static String label(String text) {
        return Text.cut(Text.strip(text).toLowerCase(Locale.ROOT), Facts.MAX_LABEL_CHARS);
    }

    /**
     * Keys empty or over MAX_ATTRIBUTE_KEY_CHARS dropped, values cut, at most MAX_ATTRIBUTES:
     * the keys first in code-point order (a map's order is not kept in every language).
     */
    static Map<String, String> attributes(Map<String, String> attributes) {
        TreeMap<String, String> sorted = new TreeMap<>(Text.CODE_POINT_ORDER);
        attributes.forEach((k, v) -> {
            String key = Text.wellFormed(k);
            if (!key.isEmpty() && Text.length(key) <= Facts.MAX_ATTRIBUTE_KEY_CHARS) {
                sorted.put(key, Text.cut(Text.wellFormed(v), Facts.MAX_ATTRIBUTE_VALUE_CHARS));
            }
        });
        while (sorted.size() > Facts.MAX_ATTRIBUTES) {
            sorted.pollLastEntry();
        }
        return sorted;
    }

    static boolean httpStatus(int status) {
        return status >= 100 && status <= 599;
    }

    static boolean grpcStatus(int status) {
        return status >= 0 && status < Facts.GRPC_CODE_NAMES.size();
    }

    // ---- validate ----

    /** The descriptor as the service accepts it, or InvalidDescriptorException naming every refused field. */
    static ExceptionDescriptor validate(ExceptionDescriptor d) {
        Violations v = new Violations();
        ExceptionDescriptor.Builder out = ExceptionDescriptor.newBuilder()
                .setType(v.typeName("type", d.getType(), true))
                .addAllSupertypes(v.typeNames("supertypes", d.getSupertypesList()))
                .setCode(v.bounded("code", d.getCode(), Facts.MAX_CODE_CHARS))
                .setMessage(wellFormedCut(d.getMessage()))
                .setLanguage(v.bounded("language", d.getLanguage(), Facts.MAX_LABEL_CHARS).toLowerCase(Locale.ROOT))
                .setProvider(v.bounded("provider", d.getProvider(), Facts.MAX_LABEL_CHARS).toLowerCase(Locale.ROOT));
        List<Cause> causes = d.getCausesList();
        if (causes.size() > Facts.MAX_CAUSES) {
            v.add("causes", causes.size() + " causes exceed the limit of " + Facts.MAX_CAUSES);
            causes = List.of();
        }
        for (int i = 0; i < causes.size(); i++) {
            Cause c = causes.get(i);
            String at = "causes[" + i + "]";
            Cause.Builder cause = Cause.newBuilder()
                    .setType(v.typeName(at + ".type", c.getType(), true))
                    .addAllSupertypes(v.typeNames(at + ".supertypes", c.getSupertypesList()))
                    .setCode(v.bounded(at + ".code", c.getCode(), Facts.MAX_CODE_CHARS))
                    .setMessage(wellFormedCut(c.getMessage()));
            if (c.hasHttpStatus() && v.httpStatus(at + ".http_status", c.getHttpStatus())) {
                cause.setHttpStatus(c.getHttpStatus());
            }
            if (c.hasGrpcStatus() && v.grpcStatus(at + ".grpc_status", c.getGrpcStatus())) {
                cause.setGrpcStatus(c.getGrpcStatus());
            }
            out.addCauses(cause);
        }
        if (d.hasHttpStatus() && v.httpStatus("http_status", d.getHttpStatus())) {
            out.setHttpStatus(d.getHttpStatus());
        }
        if (d.hasGrpcStatus() && v.grpcStatus("grpc_status", d.getGrpcStatus())) {
            out.setGrpcStatus(d.getGrpcStatus());
        }
        if (Origin.forNumber(d.getOriginValue()) == null) {
            v.add("origin", d.getOriginValue() + " is not a known origin (0-" + (Facts.ORIGIN_NAMES.size() - 1) + ")");
        } else {
            out.setOriginValue(d.getOriginValue());
        }
        out.putAllAttributes(v.attributes(d.getAttributesMap()));
        if (!v.found.isEmpty()) {
            throw new InvalidDescriptorException(v.found);
        }
        return out.build();
    }

    /** A message as the service keeps it: cut to MAX_MESSAGE_CHARS, then lone surrogates replaced. */
    private static String wellFormedCut(String text) {
        return Text.wellFormed(Text.cut(text, Facts.MAX_MESSAGE_CHARS));
    }

    /** Collects every refused field, so all are reported at once, as the service does. */
    private static final class Violations {
        final List<InvalidDescriptorException.FieldViolation> found = new ArrayList<>();

        void add(String field, String description) {
            found.add(new InvalidDescriptorException.FieldViolation(PREFIX + "." + field, description));
        }

        String bounded(String field, String value, int limit) {
            String s = Text.strip(value);
            int n = Text.length(s);
            if (n > limit) {
                add(field, n + " characters exceed the limit of " + limit);
            }
            return s;
        }

        String typeName(String field, String value, boolean required) {
            String s = bounded(field, value, Facts.MAX_TYPE_NAME_CHARS);
            if (required && s.isEmpty()) {
                add(field, "must not be empty");
            }
            return s;
        }

        List<String> typeNames(String field, List<String> values) {
            if (values.size() > Facts.MAX_SUPERTYPES) {
                add(field, values.size() + " entries exceed the limit of " + Facts.MAX_SUPERTYPES);
                return List.of();
            }
            List<String> out = new ArrayList<>();
            for (int i = 0; i < values.size(); i++) {
                String s = typeName(field + "[" + i + "]", values.get(i), true);
                if (!s.isEmpty()) {
                    out.add(s);
                }
            }
            return out;
        }

        boolean httpStatus(String field, int value) {
            if (!Limits.httpStatus(value)) {
                add(field, value + " is not an HTTP status (100-599)");
                return false;
            }
            return true;
        }

        boolean grpcStatus(String field, int value) {
            if (!Limits.grpcStatus(value)) {
                add(field, value + " is not a gRPC status code (0-" + (Facts.GRPC_CODE_NAMES.size() - 1) + ")");
                return false;
            }
            return true;
        }

        Map<String, String> attributes(Map<String, String> attributes) {
            if (attributes.size() > Facts.MAX_ATTRIBUTES) {
                add("attributes", attributes.size() + " attributes exceed the limit of " + Facts.MAX_ATTRIBUTES);
                return Map.of();
            }
            attributes.forEach((key, value) -> {
                if (key.isEmpty()) {
                    add("attributes", "an attribute key must not be empty");
                } else if (Text.length(key) > Facts.MAX_ATTRIBUTE_KEY_CHARS) {
                    add("attributes[" + pythonRepr(Text.cut(key, 40)) + "]",
                            "key exceeds the limit of " + Facts.MAX_ATTRIBUTE_KEY_CHARS + " characters");
                } else if (Text.length(value) > Facts.MAX_ATTRIBUTE_VALUE_CHARS) {
                    add("attributes[" + pythonRepr(key) + "]",
                            "value exceeds the limit of " + Facts.MAX_ATTRIBUTE_VALUE_CHARS + " characters");
                }
            });
            return attributes;
        }
    }

    /**
     * A key as the service's field paths quote it (Python's {@code repr} of a string: single
     * quotes unless the text holds one and no double quote; non-printable characters escaped).
     */
    static String pythonRepr(String text) {
        char quote = text.indexOf('\'') >= 0 && text.indexOf('"') < 0 ? '"' : '\'';
        StringBuilder out = new StringBuilder().append(quote);
        text.codePoints().forEach(c -> {
            if (c == quote || c == '\\') {
                out.append('\\').appendCodePoint(c);
            } else if (c == '\n') {
                out.append("\\n");
            } else if (c == '\r') {
                out.append("\\r");
            } else if (c == '\t') {
                out.append("\\t");
            } else if (printable(c)) {
                out.appendCodePoint(c);
            } else if (c <= 0xFF) {
                out.append(String.format("\\x%02x", c));
            } else if (c <= 0xFFFF) {
                out.append(String.format("\\u%04x", c));
            } else {
                out.append(String.format("\\U%08x", c));
            }
        });
        return out.append(quote).toString();
    }

    /** Python's {@code str.isprintable} for one character: not a control, format, separator or unassigned one (space is). */
    private static boolean printable(int c) {
        if (c == ' ') {
            return true;
        }
        return switch (Character.getType(c)) {
            case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE, Character.UNASSIGNED,
                    Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR, Character.SPACE_SEPARATOR -> false;
            default -> true;
        };
    }
}
