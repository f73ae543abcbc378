package errorclass

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Go's regexp has no DFA: an unanchored search that fails walks its NFA over the whole
// message, some microseconds for a long case-insensitive alternation (measured on the
// library: 20 us for a 150-byte message, the evaluation's p99 three times the 5 us it is
// held to), where C++ RE2 takes a fraction of one. Most messages match none of the
// patterns they meet, so each pattern gets a prefilter, as RE2's own prefilter and code
// search's trigram index do: the literals a match must contain, read from the pattern's
// syntax tree. A message without them cannot match and the regexp does not run; a
// pattern that is only an alternation of literals is decided by finding one; otherwise
// the regexp decides. TestPrefiltersNeverRefuseAMatch holds every pattern of the spec's
// bundles to its regexp on every message of the bundle vectors.

// prefilter is what a match must contain: a tree of literals (all of a concatenation's,
// one of an alternation's); exact when the pattern is nothing but an alternation of
// literals (no class, repetition or anchor they leave out), so that finding one is a
// match and the regexp need not run.
type prefilter struct {
	root  *filterNode
	exact bool
}

type filterOp uint8

const (
	filterLiteral filterOp = iota
	filterAll
	filterAny
)

type filterNode struct {
	op   filterOp
	lit  literal
	subs []*filterNode
}

// literal is a text a match contains: as it is, or case-folded (then lower case ASCII,
// found in the message folded by foldASCII).
type literal struct {
	text string
	fold bool
}

// maxLiterals bounds a prefilter: past it, the regexp is run instead.
const maxLiterals = 32

// newPrefilter is the prefilter of a pattern, or nil when it has none (a match can be
// made of anything: a class, a repetition that may be empty).
func newPrefilter(pattern string) *prefilter {
	re, err := syntax.Parse(pattern, syntax.Perl) // as regexp.Compile parses it
	if err != nil {
		return nil
	}
	re = re.Simplify()
	if literals, ok := exactly(re); ok {
		root := &filterNode{op: filterAny}
		for _, l := range literals {
			root.subs = append(root.subs, &filterNode{op: filterLiteral, lit: l})
		}
		return &prefilter{root: root, exact: true}
	}
	root := required(re)
	if root == nil || root.count() > maxLiterals {
		return nil
	}
	return &prefilter{root: root}
}

// required is what every match of re contains (nil: nothing known).
func required(re *syntax.Regexp) *filterNode {
	switch re.Op {
	case syntax.OpLiteral:
		if lit, ok := literalOf(re); ok {
			return &filterNode{op: filterLiteral, lit: lit}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpAlternate:
		oneOf := &filterNode{op: filterAny}
		for _, sub := range re.Sub {
			node := required(sub)
			if node == nil {
				return nil
			}
			oneOf.subs = append(oneOf.subs, node)
		}
		return oneOf
	case syntax.OpConcat:
		return concatRequired(re.Sub)
	}
	return nil
}

// concatRequired: every part of a concatenation is in a match.
func concatRequired(subs []*syntax.Regexp) *filterNode {
	all := &filterNode{op: filterAll}
	for _, sub := range subs {
		if node := required(sub); node != nil {
			all.subs = append(all.subs, node)
		}
	}
	switch len(all.subs) {
	case 0:
		return nil
	case 1:
		return all.subs[0]
	}
	return all
}

func (n *filterNode) count() int {
	if n.op == filterLiteral {
		return 1
	}
	total := 0
	for _, sub := range n.subs {
		total += sub.count()
	}
	return total
}

// holds is whether the message holds what the node asks; folded is the message folded
// (foldASCII), made when first needed.
func (n *filterNode) holds(message string, folded *string) bool {
	switch n.op {
	case filterLiteral:
		if !n.lit.fold {
			return strings.Contains(message, n.lit.text)
		}
		if *folded == "" && message != "" {
			*folded = foldASCII(message)
		}
		return strings.Contains(*folded, n.lit.text)
	case filterAll:
		for _, sub := range n.subs {
			if !sub.holds(message, folded) {
				return false
			}
		}
		return true
	}
	for _, sub := range n.subs {
		if sub.holds(message, folded) {
			return true
		}
	}
	return false
}

// mayMatch is false when the message cannot match.
func (p *prefilter) mayMatch(message string, folded *string) bool {
	return p.root.holds(message, folded)
}

// exactly is every text re matches, when they are few, none empty, and all of one case
// (folded or not): then a search for re is a search for any of them.
func exactly(re *syntax.Regexp) ([]literal, bool) {
	texts, fold, ok := expand(re)
	if !ok || len(texts) == 0 {
		return nil, false
	}
	out := make([]literal, 0, len(texts))
	for _, text := range texts {
		if text == "" {
			return nil, false
		}
		out = append(out, literal{text: text, fold: fold == foldYes})
	}
	return out, true
}

// foldState is whether the literals of a subtree are case-folded, not, or have none.
type foldState uint8

const (
	foldNone foldState = iota
	foldNo
	foldYes
)

func joinFold(a, b foldState) (foldState, bool) {
	if a == foldNone || a == b {
		return b, true
	}
	return a, b == foldNone
}

// expand is every text re matches (lower case when folded), if they are at most
// maxLiterals: literals, alternations, concatenations, optional parts and small classes.
func expand(re *syntax.Regexp) ([]string, foldState, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return []string{""}, foldNone, true
	case syntax.OpLiteral:
		lit, ok := literalOf(re)
		if !ok {
			return nil, foldNone, false
		}
		return []string{lit.text}, map[bool]foldState{true: foldYes, false: foldNo}[lit.fold], true
	case syntax.OpCharClass:
		var texts []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if r >= utf8.RuneSelf || len(texts) == maxLiterals {
					return nil, foldNone, false
				}
				texts = append(texts, string(r))
			}
		}
		// a class is exact as it is: no folding of its own (the parser put the folds in)
		return texts, foldNone, len(texts) > 0 && !hasLetter(texts)
	case syntax.OpCapture:
		return expand(re.Sub[0])
	case syntax.OpQuest:
		texts, fold, ok := expand(re.Sub[0])
		return append(texts, ""), fold, ok && len(texts) < maxLiterals
	case syntax.OpAlternate:
		var out []string
		fold := foldNone
		for _, sub := range re.Sub {
			texts, f, ok := expand(sub)
			if !ok {
				return nil, foldNone, false
			}
			if fold, ok = joinFold(fold, f); !ok {
				return nil, foldNone, false
			}
			out = append(out, texts...)
		}
		return out, fold, len(out) <= maxLiterals
	case syntax.OpConcat:
		out := []string{""}
		fold := foldNone
		for _, sub := range re.Sub {
			texts, f, ok := expand(sub)
			if !ok {
				return nil, foldNone, false
			}
			if fold, ok = joinFold(fold, f); !ok || len(out)*len(texts) > maxLiterals {
				return nil, foldNone, false
			}
			next := make([]string, 0, len(out)*len(texts))
			for _, head := range out {
				for _, tail := range texts {
					next = append(next, head+tail)
				}
			}
			out = next
		}
		return out, fold, true
	}
	return nil, foldNone, false
}

// hasLetter: a class holding a letter is left to the regexp (which letters a folded
// class holds is the parser's business).
func hasLetter(texts []string) bool {
	for _, t := range texts {
		if c := t[0]; ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') {
			return true
		}
	}
	return false
}

// literalOf is a literal node's text: a case-folded one only when it is ASCII (whose
// folds foldASCII knows), never U+FFFD (which stands for any byte that is not UTF-8).
func literalOf(re *syntax.Regexp) (literal, bool) {
	text := string(re.Rune)
	if text == "" || strings.ContainsRune(text, utf8.RuneError) {
		return literal{}, false
	}
	if re.Flags&syntax.FoldCase == 0 {
		return literal{text: text}, true
	}
	for _, r := range re.Rune {
		if r >= utf8.RuneSelf {
			return literal{}, false
		}
	}
	return literal{text: strings.ToLower(text), fold: true}, true
}

// asciiFolds are the characters outside ASCII that Go's regexp folds to an ASCII letter
// (unicode.SimpleFold: the Kelvin sign with k, the long s with s).
var asciiFolds = map[rune]byte{'\u212a': 'k', '\u017f': 's'}

// foldASCII is text with ASCII letters, and the characters that fold to them, in lower
// case; everything else as it is.
func foldASCII(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if folded, ok := asciiFolds[r]; ok && size > 1 {
			b.WriteByte(folded)
		} else {
			b.WriteString(text[i : i+size])
		}
		i += size
	}
	return b.String()
}
