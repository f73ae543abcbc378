package errorclass

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// runtimeFact is one fact of the runtime contract (facts.go renders the vocabulary).
type runtimeFact struct {
	name   string
	values []string
	open   bool // another word is accepted too
	count  bool // a whole number
}

var openFact = regexp.MustCompile(openFactPattern)

// FactError is a runtime fact whose value the runtime contract refuses: a time_limit
// that is neither "tool" nor "run", a veto that is not a word, a refused_by that names
// no guard, a provider_calls that is not a count. Sending it would make the service's
// rules read something the runtime never meant, so it is refused here, naming the fact.
type FactError struct {
	Fact   string // the attribute: time_limit, veto, stage, refused_by, provider_calls
	Value  any
	Reason string
}

func (e *FactError) Error() string {
	return fmt.Sprintf("errorclass: runtime fact %s: %#v %s", e.Fact, e.Value, e.Reason)
}

// RuntimeAttributes is the attributes for what only the runtime knows, checked against
// the runtime contract: facts maps a fact (time_limit, veto, stage, refused_by,
// provider_calls) to its value; each value is stripped and lower-cased; a closed fact
// takes its values (TimeLimitTool, StageParse, RefusedByBreaker, ...), an open one (veto)
// also any word, a count a whole number (an integer, or text of digits), written in
// decimal. The first refused fact in the contract's order is the *FactError; a name
// outside the contract is refused too. The Describe options (ToolTimeLimit, Veto,
// RefusedBy, ...) check their values with it.
func RuntimeAttributes(facts map[string]any) (map[string]string, error) {
	out := map[string]string{}
	for _, fact := range runtimeFacts {
		value, given := facts[fact.name]
		if !given {
			continue
		}
		attribute, err := fact.attribute(value)
		if err != nil {
			return nil, err
		}
		out[fact.name] = attribute
	}
	var unknown []string
	for name := range facts {
		if !slices.ContainsFunc(runtimeFacts, func(f runtimeFact) bool { return f.name == name }) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, &FactError{Fact: unknown[0], Value: facts[unknown[0]], Reason: "is not a runtime fact (" + factNames() + ")"}
	}
	return out, nil
}

func factNames() string {
	names := make([]string, len(runtimeFacts))
	for i, f := range runtimeFacts {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

func factNamed(name string) (runtimeFact, bool) {
	i := slices.IndexFunc(runtimeFacts, func(f runtimeFact) bool { return f.name == name })
	if i < 0 {
		return runtimeFact{}, false
	}
	return runtimeFacts[i], true
}

// attribute is the fact's value as its attribute, or the error naming the fact.
func (f runtimeFact) attribute(value any) (string, error) {
	refuse := func(reason string) (string, error) {
		return "", &FactError{Fact: f.name, Value: value, Reason: reason}
	}
	if f.count {
		if n, ok := count(value); ok {
			return n, nil
		}
		return refuse("is not a count (0, 1, 2, ...)")
	}
	text, ok := value.(string)
	if !ok {
		return refuse("is not text")
	}
	word := lower(strip(text))
	switch {
	case slices.Contains(f.values, word):
		return word, nil
	case f.open && openFact.MatchString(word):
		return word, nil
	case f.open:
		return refuse(fmt.Sprintf("is not a word (%s); the service knows %s, and another word is a %s too",
			openFactPattern, strings.Join(f.values, ", "), f.name))
	}
	return refuse("is not one of " + strings.Join(f.values, ", "))
}

// count is value as a count written in decimal ("007" is "7"), and whether it is one: a
// Go integer, a whole JSON number, or text of ASCII digits (stripped). A bool is not.
func count(value any) (string, bool) {
	switch v := value.(type) {
	case string:
		digits := strip(v)
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			return "", false
		}
		if digits = strings.TrimLeft(digits, "0"); digits == "" {
			return "0", true
		}
		return digits, true
	case json.Number:
		return count(string(v))
	case float64:
		if v < 0 || v != math.Trunc(v) || v > 1<<53 {
			return "", false
		}
		return strconv.FormatFloat(v, 'f', 0, 64), true
	case float32:
		return count(float64(v))
	}
	r := reflect.ValueOf(value)
	switch r.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if r.Int() >= 0 {
			return strconv.FormatInt(r.Int(), 10), true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(r.Uint(), 10), true
	}
	return "", false
}
