package dev.errorclass.client;

import java.util.List;
import java.util.stream.Collectors;

/**
 * The service refused the descriptor (INVALID_ARGUMENT): each field and what is wrong with it,
 * from the status's BadRequest details. A retry cannot help; fix the descriptor.
 */
public final class InvalidDescriptorException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /** One refused field, e.g. {@code descriptor.type: is required}. */
    public record FieldViolation(String field, String description) {
        @Override
        public String toString() {
            return field.isEmpty() ? description : field + ": " + description;
        }
    }

    private final transient List<FieldViolation> violations;

    InvalidDescriptorException(List<FieldViolation> violations) {
        super(violations.stream().map(FieldViolation::toString).collect(Collectors.joining("; ")));
        this.violations = List.copyOf(violations);
    }

    /** The refused fields, in the server's order. */
    public List<FieldViolation> violations() {
        return violations;
    }
}
