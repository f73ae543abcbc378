package dev.errorclass.client;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import dev.errorclass.v1.Action;
import dev.errorclass.v1.Cause;
import dev.errorclass.v1.ClassifyResponse;
import dev.errorclass.v1.ExceptionDescriptor;
import dev.errorclass.v1.RunEffect;
import dev.errorclass.v1.UnknownReason;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A bundle's rules, indexed once, and the engine's precedence over their matches (docs/bundles.md,
 * "Before matching", "Matching", "Precedence"). Everything is read from the bundle (its {@code
 * descriptor} normalisation, its limits, its rules), nothing from the service; the Python
 * reference evaluator (clients/python/errorclass_client/bundle) is the logic it ports, and
 * clients/spec/vectors/bundle*.json hold it to the service's answers.
 *
 * <p>An evaluation is a few map lookups, not a scan of the rules: rules are split into the
 * precedence's first two keys (decisive, fallback: four tiers), indexed by the type names they
 * list, and within a type by one plain field (code, gRPC status, provider, origin, language) a
 * descriptor must have for them to match. The descriptor's chain (type, then supertypes) is
 * walked once per tier, and the first depth with a match decides, since type depth is the next
 * key. Message patterns are compiled once, with re2j (RE2's linear-time semantics, as the
 * service's C++ RE2 and the other clients' RE2 ports); a pattern of literal texts and character
 * runs is decided by {@link LiteralPattern} without it, and the others run only when {@link
 * LiteralPrefilter} finds the literals they need. Cheap conditions are tested before causes and
 * patterns.
 */
final class BundleEvaluator {
    /** The fields a bundle strips; a bundle naming others is of a format this evaluator does not know. */
    private static final Set<String> STRIPPED = Set.of("type", "supertypes", "code", "language", "provider");
    private static final Set<String> LOWER_CASEABLE = Set.of("language", "provider");
    private static final int NONE = Integer.MIN_VALUE;

    final String version;
    final String digest;
    private final Normaliser normaliser;
    private final Tier[] tiers;
    private final ClassifyResponse noMatch;
    private final ClassifyResponse conflict;
    final int ruleCount;
    final int patternCount;

    BundleEvaluator(JsonObject doc) {
        JsonObject ruleset = member(doc, "ruleset").getAsJsonObject();
        this.version = text(ruleset, "version");
        this.digest = text(ruleset, "digest");
        this.normaliser = new Normaliser(member(doc, "descriptor").getAsJsonObject());
        JsonObject unknown = member(doc, "unknown").getAsJsonObject();
        this.noMatch = answer(member(unknown, "no_match").getAsJsonObject(), "", UnknownReason.UNKNOWN_REASON_NO_MATCH);
        this.conflict = answer(member(unknown, "conflict").getAsJsonObject(), "", UnknownReason.UNKNOWN_REASON_CONFLICT);
        Map<String, Test> patterns = new HashMap<>();
        List<Rule> rules = new ArrayList<>();
        for (JsonElement r : member(doc, "rules").getAsJsonArray()) {
            rules.add(rule(r.getAsJsonObject(), patterns));
        }
        this.ruleCount = rules.size();
        this.patternCount = patterns.size();
        List<Tier> built = new ArrayList<>();
        for (int tier = 0; tier < 4; tier++) {
            Map<String, List<Rule>> byType = new HashMap<>();
            List<Rule> untyped = new ArrayList<>();
            for (Rule rule : rules) {
                if (rule.tier != tier) {
                    continue;
                }
                if (rule.names == null) {
                    untyped.add(rule);
                } else {
                    for (String name : rule.names) {
                        byType.computeIfAbsent(name, n -> new ArrayList<>()).add(rule);
                    }
                }
            }
            if (!byType.isEmpty() || !untyped.isEmpty()) {
                Map<String, Bucket> buckets = new HashMap<>();
                byType.forEach((name, rs) -> buckets.put(name, new Bucket(rs)));
                built.add(new Tier(buckets, untyped.isEmpty() ? null : new Bucket(untyped)));
            }
        }
        this.tiers = built.toArray(new Tier[0]);
    }

    /**
     * The answer for {@code descriptor}, as the service gives it, with the wait its retry
     * evidence asks for when the answer is retryable ({@code clock}: the runtime's, read only
     * when a date must become a wait); InvalidDescriptorException for one it refuses.
     */
    ClassifyResponse classify(ExceptionDescriptor descriptor, Clock clock) {
        Subject d = normaliser.descriptor(descriptor);
        List<Rule> found = new ArrayList<>(4);
        for (Tier tier : tiers) {
            nearest(tier, d, found);
            if (!found.isEmpty()) {
                Rule rule = decide(found);
                if (rule == null) {
                    return conflict;
                }
                // The hot path: a descriptor without attributes carries no retry evidence.
                return rule.cap == null || descriptor.getAttributesCount() == 0 ? rule.answer : advised(rule, descriptor, clock);
            }
        }
        return noMatch;
    }

    /** A retryable rule's answer with the wait the evidence asks for (a fresh message: the wait is the descriptor's). */
    private static ClassifyResponse advised(Rule rule, ExceptionDescriptor descriptor, Clock clock) {
        Optional<RetryAfter> wait = RetryAfter.read(descriptor.getAttributesMap(), rule.cap, clock);
        if (wait.isEmpty()) {
            return rule.answer;
        }
        Duration w = wait.get().delay();
        return rule.answer.toBuilder()
                .setRetryAfter(com.google.protobuf.Duration.newBuilder().setSeconds(w.getSeconds()).setNanos(w.getNano()))
                .setRetryAfterSource(wait.get().labelledSource())
                .build();
    }

    /**
     * The matching rules at the nearest type depth that has any (type depth is the key after
     * the tier, so nothing deeper can win), then the untyped ones.
     */
    private static void nearest(Tier tier, Subject d, List<Rule> found) {
        for (String name : d.chain) {
            Bucket bucket = tier.byType.get(name);
            if (bucket != null) {
                bucket.find(d, found);
                if (!found.isEmpty()) {
                    return;
                }
            }
        }
        if (tier.untyped != null) {
            tier.untyped.find(d, found);
        }
    }

    /**
     * The best of rules tied on the tier and type depth: more conditions, then higher priority,
     * then the lower layer; still tied, the first in order answers when all agree on class and
     * effect, else none does (null: the answer is Unknown {@code conflict}).
     */
    private static Rule decide(List<Rule> found) {
        Rule first = null;
        for (Rule r : found) {
            if (first == null || r.compareRank(first) < 0 || r.compareRank(first) == 0 && r.order < first.order) {
                first = r;
            }
        }
        for (Rule r : found) {
            if (r.compareRank(first) == 0 && (r.answerClass != first.answerClass || !r.answerEffect.equals(first.answerEffect))) {
                return null;
            }
        }
        return first;
    }

    // ---- the bundle's rules ----

    private Rule rule(JsonObject r, Map<String, Test> patterns) {
        String id = text(r, "id");
        try {
            JsonArray conditions = member(r, "conditions").getAsJsonArray();
            Test[] tests = ordered(conditions, patterns, false);
            JsonElement type = r.get("type");
            String[] names = null;
            if (type != null && !type.isJsonNull()) {
                names = strings(type.getAsJsonArray()).toArray(new String[0]);
            }
            JsonObject answer = member(r, "answer").getAsJsonObject();
            boolean decisive = member(r, "decisive").getAsBoolean();
            boolean fallback = member(r, "fallback").getAsBoolean();
            return new Rule(id, member(r, "order").getAsInt(), (decisive ? 0 : 2) + (fallback ? 1 : 0),
                    member(r, "condition_count").getAsInt(), member(r, "priority").getAsInt(), member(r, "layer").getAsInt(),
                    tests, names, split(conditions), answer(answer, id, UnknownReason.UNKNOWN_REASON_UNSPECIFIED), cap(answer));
        } catch (BundleException e) {
            throw new BundleException(e.code(), "rule " + id + ": " + e.getMessage().substring(e.code().length() + 2));
        } catch (RuntimeException e) {
            throw new BundleException("invalid_bundle", "rule " + id + ": " + e);
        }
    }

    /**
     * The conditions as tests, the cheap ones first (a field, an attribute, a type), then a
     * cause's, then a message pattern's: every one must hold, so a rule whose plain fields
     * differ never runs its patterns. The order changes no answer.
     */
    private Test[] ordered(JsonArray conditions, Map<String, Test> patterns, boolean inCause) {
        List<Test> cheap = new ArrayList<>();
        List<Test> causes = new ArrayList<>();
        List<Test> messages = new ArrayList<>();
        for (JsonElement e : conditions) {
            JsonObject c = e.getAsJsonObject();
            String kind = text(c, "kind");
            Test t = test(c, patterns, inCause);
            (kind.equals("message") ? messages : kind.equals("cause") ? causes : cheap).add(t);
        }
        cheap.addAll(causes);
        cheap.addAll(messages);
        return cheap.toArray(new Test[0]);
    }

    /** One condition of the bundle as a test of a subject; {@code inCause}: inside a {@code cause} condition. */
    private Test test(JsonObject c, Map<String, Test> patterns, boolean inCause) {
        String kind = text(c, "kind");
        switch (kind) {
            case "type" -> {
                Set<String> names = new HashSet<>(strings(member(c, "names").getAsJsonArray()));
                return s -> {
                    for (String n : s.chain) {
                        if (names.contains(n)) {
                            return true;
                        }
                    }
                    return false;
                };
            }
            case "field_in" -> {
                Field field = Field.of(text(c, "field"), inCause);
                if (c.has("ranges")) {
                    if (field != Field.HTTP_STATUS && field != Field.GRPC_STATUS) {
                        throw new BundleException("invalid_bundle", "ranges of the text field " + field.name);
                    }
                    JsonArray ranges = c.getAsJsonArray("ranges");
                    int[] lo = new int[ranges.size()];
                    int[] hi = new int[ranges.size()];
                    for (int i = 0; i < lo.length; i++) {
                        lo[i] = ranges.get(i).getAsJsonArray().get(0).getAsInt();
                        hi[i] = ranges.get(i).getAsJsonArray().get(1).getAsInt();
                    }
                    return s -> {
                        int v = field.number(s);
                        if (v == NONE) {
                            return false;
                        }
                        for (int i = 0; i < lo.length; i++) {
                            if (lo[i] <= v && v <= hi[i]) {
                                return true;
                            }
                        }
                        return false;
                    };
                }
                Set<Object> values = field.values(member(c, "values").getAsJsonArray());
                return s -> {
                    Object v = field.key(s);
                    return v != null && values.contains(v);
                };
            }
            case "present" -> {
                Field field = Field.of(text(c, "field"), inCause);
                boolean wanted = member(c, "present").getAsBoolean();
                return s -> field.isSet(s) == wanted;
            }
            case "message" -> {
                String source = text(c, "pattern");
                Test matches = patterns.get(source);
                if (matches == null) {
                    Pattern compiled;
                    try {
                        compiled = Pattern.compile(source);
                    } catch (PatternSyntaxException e) {
                        throw new BundleException("invalid_bundle", "the message pattern " + source + ": " + e.getMessage());
                    }
                    LiteralPattern literal = LiteralPattern.of(source);
                    LiteralPrefilter needs = LiteralPrefilter.of(source);
                    LiteralPrefilter.Search search = literal == null ? LiteralPrefilter.Search.of(source) : null;
                    Test regexp = search == null ? s -> compiled.matcher(s.message()).find()
                            : search.caseless() ? s -> search.find(s.message(), s.folded()) : s -> search.find(s.message(), null);
                    if (literal != null) {
                        matches = literal.caseless() ? s -> literal.matches(s.message(), s.folded())
                                : s -> literal.matches(s.message(), null);
                    } else if (needs == null) {
                        matches = regexp;
                    } else if (needs.caseless()) {
                        matches = s -> needs.mayMatch(s.message(), s.folded()) && regexp.test(s);
                    } else {
                        matches = s -> needs.mayMatch(s.message(), null) && regexp.test(s);
                    }
                    patterns.put(source, matches);
                }
                return matches;
            }
            case "attribute" -> {
                if (inCause) {
                    throw new BundleException("invalid_bundle", "an attribute condition inside a cause (a cause has no attributes)");
                }
                String name = text(c, "name");
                Set<String> values = new HashSet<>(strings(member(c, "values").getAsJsonArray()));
                return s -> {
                    String v = s.attributes.get(name);
                    return v != null && values.contains(v);
                };
            }
            case "cause" -> {
                if (inCause) {
                    throw new BundleException("invalid_bundle", "a cause condition inside a cause");
                }
                Test[] tests = ordered(member(c, "conditions").getAsJsonArray(), patterns, true);
                return s -> {
                    for (Subject cause : s.causes) {
                        if (holds(tests, cause)) {
                            return true;
                        }
                    }
                    return false;
                };
            }
            default -> throw new BundleException("unsupported_format", "a condition of kind '" + kind + "'");
        }
    }

    /**
     * A plain field and its values among the rule's own conditions, the first of {@link
     * Field#SPLIT} order: a descriptor whose field is elsewhere cannot match, so the bucket finds
     * the rule by it instead of testing it.
     */
    private static Split split(JsonArray conditions) {
        Map<Field, JsonArray> plain = new HashMap<>();
        for (JsonElement e : conditions) {
            JsonObject c = e.getAsJsonObject();
            if (text(c, "kind").equals("field_in") && c.has("values")) {
                plain.putIfAbsent(Field.of(text(c, "field"), false), c.getAsJsonArray("values"));
            }
        }
        for (Field f : Field.SPLIT) {
            if (plain.containsKey(f)) {
                return new Split(f, f.values(plain.get(f)));
            }
        }
        return null;
    }

    private ClassifyResponse answer(JsonObject a, String ruleId, UnknownReason reason) {
        JsonObject action = member(a, "action").getAsJsonObject();
        int effect = Facts.EFFECT_NAMES.indexOf(text(a, "effect"));
        if (effect < 0) {
            throw new BundleException("invalid_bundle", "the effect '" + text(a, "effect") + "' is none of " + Facts.EFFECT_NAMES);
        }
        return ClassifyResponse.newBuilder()
                .setErrorClassValue(member(a, "class").getAsInt())
                .setClassName(text(a, "class_name"))
                .setAction(Action.newBuilder()
                        .setId(text(action, "id"))
                        .setSummary(text(action, "summary"))
                        .setRunbookUrl(action.has("runbook_url") ? text(action, "runbook_url") : ""))
                .setEffect(RunEffect.forNumber(effect))
                .setRetryable(member(a, "retryable").getAsBoolean())
                .setRuleId(ruleId)
                .setRulesetVersion(version)
                .setRulesetDigest(digest)
                .setUnknownReason(reason)
                .build();
    }

    /**
     * A retryable answer's cap on an advised wait ({@code retry_after_cap_seconds}, present only
     * on retryable answers); null for an answer that never advises one.
     */
    private static Duration cap(JsonObject answer) {
        JsonElement cap = answer.get("retry_after_cap_seconds");
        if (cap == null || cap.isJsonNull()) {
            return null;
        }
        double seconds = cap.getAsDouble();
        if (!(seconds >= 0) || Double.isInfinite(seconds)) {
            throw new BundleException("invalid_bundle", "retry_after_cap_seconds " + cap + " is no number of seconds");
        }
        return Durations.ofSeconds(seconds);
    }

    static JsonElement member(JsonObject o, String name) {
        JsonElement v = o.get(name);
        if (v == null || v.isJsonNull()) {
            throw new BundleException("invalid_bundle", "'" + name + "' is missing");
        }
        return v;
    }

    static String text(JsonObject o, String name) {
        JsonElement v = member(o, name);
        if (!Json.isText(v)) {
            throw new BundleException("invalid_bundle", "'" + name + "' is not text");
        }
        return v.getAsString();
    }

    private static List<String> strings(JsonArray array) {
        List<String> out = new ArrayList<>(array.size());
        for (JsonElement e : array) {
            if (!Json.isText(e)) {
                throw new BundleException("invalid_bundle", "a list of names holds " + e);
            }
            out.add(e.getAsString());
        }
        return out;
    }

    static boolean holds(Test[] tests, Subject s) {
        for (Test t : tests) {
            if (!t.test(s)) {
                return false;
            }
        }
        return true;
    }

    // ---- the index ----

    @FunctionalInterface
    interface Test {
        boolean test(Subject s);
    }

    private record Split(Field field, Set<Object> values) {}

    private record Tier(Map<String, Bucket> byType, Bucket untyped) {}

    private static final class Rule {
        final String id;
        final int order;
        final int tier;
        final int conditionCount;
        final int priority;
        final int layer;
        final Test[] tests;
        final String[] names;
        final Split split;
        final ClassifyResponse answer;
        final int answerClass;
        final RunEffect answerEffect;
        /** The cap on an advised wait; null when the answer is not retryable. */
        final Duration cap;

        Rule(String id, int order, int tier, int conditionCount, int priority, int layer, Test[] tests, String[] names,
                Split split, ClassifyResponse answer, Duration cap) {
            this.id = id;
            this.order = order;
            this.tier = tier;
            this.conditionCount = conditionCount;
            this.priority = priority;
            this.layer = layer;
            this.tests = tests;
            this.names = names;
            this.split = split;
            this.answer = answer;
            this.answerClass = answer.getErrorClassValue();
            this.answerEffect = answer.getEffect();
            this.cap = answer.getRetryable() ? cap : null;
        }

        /** The keys after type depth: more conditions first, then higher priority, then the lower layer. */
        int compareRank(Rule o) {
            if (conditionCount != o.conditionCount) {
                return Integer.compare(o.conditionCount, conditionCount);
            }
            if (priority != o.priority) {
                return Integer.compare(o.priority, priority);
            }
            return Integer.compare(layer, o.layer);
        }

        @Override
        public String toString() {
            return id;
        }
    }

    /** Rules that share a type name (or have none), found by their split field's value. */
    private static final class Bucket {
        private final Rule[] always;
        private final Field[] fields;
        private final List<Map<Object, Rule[]>> indexes = new ArrayList<>();

        Bucket(List<Rule> rules) {
            List<Rule> plain = new ArrayList<>();
            Map<Field, Map<Object, List<Rule>>> byField = new HashMap<>();
            for (Rule rule : rules) {
                if (rule.split == null) {
                    plain.add(rule);
                } else {
                    Map<Object, List<Rule>> index = byField.computeIfAbsent(rule.split.field(), f -> new HashMap<>());
                    for (Object value : rule.split.values()) {
                        index.computeIfAbsent(value, v -> new ArrayList<>()).add(rule);
                    }
                }
            }
            this.always = plain.toArray(new Rule[0]);
            this.fields = byField.keySet().toArray(new Field[0]);
            for (Field f : fields) {
                Map<Object, Rule[]> index = new HashMap<>();
                byField.get(f).forEach((value, rs) -> index.put(value, rs.toArray(new Rule[0])));
                indexes.add(index);
            }
        }

        /** Adds the rules here whose every condition holds for d. */
        void find(Subject d, List<Rule> out) {
            for (Rule r : always) {
                if (holds(r.tests, d)) {
                    out.add(r);
                }
            }
            for (int i = 0; i < fields.length; i++) {
                Object key = fields[i].key(d);
                Rule[] rules = key == null ? null : indexes.get(i).get(key);
                if (rules != null) {
                    for (Rule r : rules) {
                        if (holds(r.tests, d)) {
                            out.add(r);
                        }
                    }
                }
            }
        }
    }

    // ---- the descriptor, normalised ----

    /** A descriptor's field a condition reads, on the descriptor or (the first three, and the message) on a cause. */
    enum Field {
        HTTP_STATUS("http_status", true, true),
        GRPC_STATUS("grpc_status", true, true),
        CODE("code", false, true),
        MESSAGE("message", false, true),
        ORIGIN("origin", false, false),
        LANGUAGE("language", false, false),
        PROVIDER("provider", false, false);

        /** The fields a bucket may split on, in the order one is chosen. */
        static final Field[] SPLIT = {CODE, GRPC_STATUS, PROVIDER, ORIGIN, LANGUAGE};

        final String name;
        final boolean numeric;
        final boolean onCause;

        Field(String name, boolean numeric, boolean onCause) {
            this.name = name;
            this.numeric = numeric;
            this.onCause = onCause;
        }

        static Field of(String name, boolean inCause) {
            for (Field f : values()) {
                if (f.name.equals(name)) {
                    if (inCause && !f.onCause) {
                        throw new BundleException("invalid_bundle", "a cause has no " + name);
                    }
                    return f;
                }
            }
            throw new BundleException("unsupported_format", "a condition on the field '" + name + "'");
        }

        /** The values a condition lists, as this field's values are held (a value of another kind never matches). */
        Set<Object> values(JsonArray list) {
            Set<Object> out = new HashSet<>();
            for (JsonElement e : list) {
                if (!e.isJsonPrimitive()) {
                    continue;
                }
                if (numeric && e.getAsJsonPrimitive().isNumber()) {
                    java.math.BigDecimal n = e.getAsBigDecimal();
                    if (n.stripTrailingZeros().scale() <= 0 && n.abs().compareTo(java.math.BigDecimal.valueOf(Integer.MAX_VALUE)) <= 0) {
                        out.add(n.intValue());
                    }
                } else if (!numeric && e.getAsJsonPrimitive().isString()) {
                    out.add(e.getAsString());
                }
            }
            return out;
        }

        int number(Subject s) {
            return this == HTTP_STATUS ? s.http : s.grpc;
        }

        /** The subject's value as the index and {@code field_in} compare it; null when unset. */
        Object key(Subject s) {
            return switch (this) {
                case HTTP_STATUS -> s.http == NONE ? null : Integer.valueOf(s.http);
                case GRPC_STATUS -> s.grpc == NONE ? null : Integer.valueOf(s.grpc);
                case CODE -> s.code;
                case MESSAGE -> s.message();
                case ORIGIN -> s.origin;
                case LANGUAGE -> s.language;
                case PROVIDER -> s.provider;
            };
        }

        /** Present and, after normalisation, not empty. */
        boolean isSet(Subject s) {
            return switch (this) {
                case HTTP_STATUS -> s.http != NONE;
                case GRPC_STATUS -> s.grpc != NONE;
                case CODE -> !s.code.isEmpty();
                case MESSAGE -> !s.rawMessage.isEmpty();
                case ORIGIN -> !s.origin.isEmpty();
                case LANGUAGE -> !s.language.isEmpty();
                case PROVIDER -> !s.provider.isEmpty();
            };
        }
    }

    /** A normalised descriptor, or one of its causes (whose origin, labels and attributes are empty). */
    static final class Subject {
        String[] chain;
        int http = NONE;
        int grpc = NONE;
        String code;
        String rawMessage;
        private String message;
        private String folded;
        private final Normaliser normaliser;
        String origin = "";
        String language = "";
        String provider = "";
        Map<String, String> attributes = Map.of();
        Subject[] causes = new Subject[0];

        Subject(Normaliser normaliser) {
            this.normaliser = normaliser;
        }

        /** The message as matched: lone surrogates replaced, cut; computed when a condition first reads it. */
        String message() {
            String m = message;
            if (m == null) {
                m = message = normaliser.message(rawMessage);
            }
            return m;
        }

        /** The message folded as a case-insensitive pattern compares it ({@link LiteralPrefilter#fold}). */
        String folded() {
            String f = folded;
            if (f == null) {
                f = folded = LiteralPrefilter.fold(message());
            }
            return f;
        }
    }

    /** What a descriptor goes through before matching, read from the bundle's {@code descriptor}. */
    static final class Normaliser {
        private final BitSet whitespace = new BitSet();
        private final int maxMessage;
        private final boolean lowerLanguage;
        private final boolean lowerProvider;
        private final int maxTypeName;
        private final int maxSupertypes;
        private final int maxCauses;
        private final int maxCode;
        private final int maxLabel;
        private final int maxAttributes;
        private final int maxAttributeKey;
        private final int maxAttributeValue;

        Normaliser(JsonObject spec) {
            text(spec, "whitespace").codePoints().forEach(whitespace::set);
            this.maxMessage = member(spec, "message_max_chars").getAsInt();
            Set<String> stripped = new HashSet<>(strings(member(spec, "stripped").getAsJsonArray()));
            if (!stripped.equals(STRIPPED)) {
                throw new BundleException("unsupported_format", "the bundle strips " + stripped + ", this evaluator " + STRIPPED);
            }
            Set<String> lower = new HashSet<>(strings(member(spec, "lower_cased").getAsJsonArray()));
            if (!LOWER_CASEABLE.containsAll(lower)) {
                throw new BundleException("unsupported_format", "the bundle lower-cases " + lower + ", this evaluator only " + LOWER_CASEABLE);
            }
            this.lowerLanguage = lower.contains("language");
            this.lowerProvider = lower.contains("provider");
            JsonObject limits = member(spec, "limits").getAsJsonObject();
            this.maxTypeName = member(limits, "MAX_TYPE_NAME_CHARS").getAsInt();
            this.maxSupertypes = member(limits, "MAX_SUPERTYPES").getAsInt();
            this.maxCauses = member(limits, "MAX_CAUSES").getAsInt();
            this.maxCode = member(limits, "MAX_CODE_CHARS").getAsInt();
            this.maxLabel = member(limits, "MAX_LABEL_CHARS").getAsInt();
            this.maxAttributes = member(limits, "MAX_ATTRIBUTES").getAsInt();
            this.maxAttributeKey = member(limits, "MAX_ATTRIBUTE_KEY_CHARS").getAsInt();
            this.maxAttributeValue = member(limits, "MAX_ATTRIBUTE_VALUE_CHARS").getAsInt();
        }

        /** {@code text} without the bundle's whitespace at either end (the same String when there is none). */
        String strip(String text) {
            int start = 0;
            int end = text.length();
            while (start < end && whitespace.get(text.charAt(start))) {
                start++;
            }
            while (end > start && whitespace.get(text.charAt(end - 1))) {
                end--;
            }
            return start == 0 && end == text.length() ? text : text.substring(start, end);
        }

        String message(String text) {
            return Text.cut(Text.wellFormed(text), maxMessage);
        }

        /**
         * The descriptor as matched; what the service would refuse (past the bundle's limits, an
         * empty type name, a status out of range, an unknown origin) raises {@link
         * InvalidDescriptorException}: a local answer the service would never give is no answer.
         */
        Subject descriptor(ExceptionDescriptor d) {
            Subject s = new Subject(this);
            boolean ok = fill(s, d.getType(), d.getSupertypesList(), d.hasHttpStatus() ? d.getHttpStatus() : NONE,
                    d.hasGrpcStatus() ? d.getGrpcStatus() : NONE, d.getCode(), d.getMessage());
            int origin = d.getOriginValue();
            if (origin < 0 || origin >= Facts.ORIGIN_NAMES.size()) {
                ok = false;
            } else if (origin > 0) {
                s.origin = Facts.ORIGIN_NAMES.get(origin);
            }
            String language = strip(d.getLanguage());
            String provider = strip(d.getProvider());
            ok &= Text.length(language) <= maxLabel && Text.length(provider) <= maxLabel;
            s.language = lowerLanguage ? lower(language) : language;
            s.provider = lowerProvider ? lower(provider) : provider;
            Map<String, String> attributes = d.getAttributesMap();
            ok &= attributes.size() <= maxAttributes;
            if (!attributes.isEmpty() && ok) {
                for (Map.Entry<String, String> a : attributes.entrySet()) {
                    String key = a.getKey();
                    ok &= !key.isEmpty() && Text.length(key) <= maxAttributeKey && Text.length(a.getValue()) <= maxAttributeValue;
                }
            }
            s.attributes = attributes;
            int n = d.getCausesCount();
            ok &= n <= maxCauses;
            if (n > 0 && ok) {
                s.causes = new Subject[n];
                for (int i = 0; i < n; i++) {
                    Cause c = d.getCauses(i);
                    Subject cause = new Subject(this);
                    ok &= fill(cause, c.getType(), c.getSupertypesList(), c.hasHttpStatus() ? c.getHttpStatus() : NONE,
                            c.hasGrpcStatus() ? c.getGrpcStatus() : NONE, c.getCode(), c.getMessage());
                    s.causes[i] = cause;
                }
            }
            if (!ok) {
                throw refused(d);
            }
            return s;
        }

        /** The fields a cause shares with the descriptor; false when one is past a limit or out of range. */
        private boolean fill(Subject s, String type, List<String> supertypes, int http, int grpc, String code, String message) {
            int n = supertypes.size();
            boolean ok = n <= maxSupertypes;
            String[] chain = new String[n + 1];
            chain[0] = strip(type);
            for (int i = 0; i < n; i++) {
                chain[i + 1] = strip(supertypes.get(i));
            }
            for (String name : chain) {
                ok &= !name.isEmpty() && (name.length() <= maxTypeName || Text.length(name) <= maxTypeName);
            }
            s.chain = chain;
            s.http = http;
            s.grpc = grpc;
            ok &= http == NONE || Limits.httpStatus(http);
            ok &= grpc == NONE || Limits.grpcStatus(grpc);
            s.code = strip(code);
            ok &= s.code.length() <= maxCode || Text.length(s.code) <= maxCode;
            s.rawMessage = message;
            return ok;
        }

        /** Unicode's full lower-case mapping, final sigma included, as Python's str.lower. */
        private static String lower(String label) {
            return label.toLowerCase(Locale.ROOT);
        }

        /** The service's own violations of a refused descriptor (its wording), else the bundle's limits'. */
        private static InvalidDescriptorException refused(ExceptionDescriptor d) {
            try {
                Limits.validate(d);
            } catch (InvalidDescriptorException e) {
                return e;
            }
            return new InvalidDescriptorException(List.of(new InvalidDescriptorException.FieldViolation(
                    "descriptor", "past a limit of the bundle (its descriptor.limits)")));
        }
    }
}
