package dev.errorclass.conformance;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.errorclass.client.Descriptors;
import java.io.File;
import java.lang.reflect.Modifier;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * The drift check's Java entries: every public Throwable class of the pinned SDK jars on the
 * class path, as {"sdk", "language": "java", "type", "supertypes"} with type and supertypes
 * exactly as {@link Descriptors#from} sends them (tests/conformance/drift/java.py reads them).
 */
public final class ErrorClasses {
    /** Which jars belong to which SDK: a path fragment of the jar in the local repository. */
    static final Map<String, String> SDK_JARS = new LinkedHashMap<>();

    static {
        SDK_JARS.put("/com/openai/openai-java-core/", "openai-java");
        SDK_JARS.put("/com/anthropic/anthropic-java-core/", "anthropic-java");
        SDK_JARS.put("/dev/langchain4j/", "langchain4j");
        SDK_JARS.put("/org/springframework/ai/", "spring-ai");
        SDK_JARS.put("/software/amazon/awssdk/bedrockruntime/", "aws-sdk-java-v2");
        SDK_JARS.put("/software/amazon/awssdk/sdk-core/", "aws-sdk-java-v2");
        SDK_JARS.put("/software/amazon/awssdk/aws-core/", "aws-sdk-java-v2");
        SDK_JARS.put("/com/squareup/okhttp3/okhttp/", "okhttp");
        SDK_JARS.put("/io/github/resilience4j/", "resilience4j");
    }

    public static void main(String[] args) throws Exception {
        Map<String, ObjectNode> out = new TreeMap<>();
        ClassLoader loader = ErrorClasses.class.getClassLoader();
        for (String path : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String sdk = sdkOf(path);
            if (sdk == null || !path.endsWith(".jar")) {
                continue;
            }
            try (JarFile jar = new JarFile(path)) {
                for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                    String name = e.nextElement().getName();
                    if (!name.endsWith(".class") || name.contains("-") || name.matches(".*\\$\\d+.*\\.class")) {
                        continue;
                    }
                    String className = name.substring(0, name.length() - ".class".length()).replace('/', '.');
                    Class<?> c;
                    try {
                        c = Class.forName(className, false, loader);
                    } catch (Throwable t) {
                        continue; // an optional dependency of this class is absent: not raisable here
                    }
                    if (!Throwable.class.isAssignableFrom(c) || !Modifier.isPublic(c.getModifiers())) {
                        continue;
                    }
                    ObjectNode entry = Worker.JSON.createObjectNode();
                    entry.put("sdk", sdk);
                    entry.put("language", "java");
                    entry.put("type", c.getName());
                    ArrayNode supers = entry.putArray("supertypes");
                    Descriptors.supertypes(c).forEach(supers::add);
                    out.put(sdk + " " + c.getName(), entry);
                }
            }
        }
        ArrayNode list = Worker.JSON.createArrayNode();
        out.values().forEach(list::add);
        System.out.println(Worker.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(list));
    }

    static String sdkOf(String path) {
        String p = path.replace(File.separatorChar, '/');
        for (Map.Entry<String, String> e : SDK_JARS.entrySet()) {
            if (p.contains(e.getKey())) {
                return e.getValue();
            }
        }
        return null;
    }

    private ErrorClasses() {}
}
