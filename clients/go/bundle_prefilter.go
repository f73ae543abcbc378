package errorclass

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Go's regexp has no DFA: an unanchored search that fails walks its NFA over the whole
// message, some microseconds for a long case-insensitive alternation (measured on the
// library: 20 us for a 150-byte message, and 4.6 us for `Client\.Timeout exceeded|:
// i/o timeout$|context deadline exceeded` on a 74-byte message that matches), where C++
// RE2 takes a fraction of one. So each pattern gets a prefilter, as RE2's own prefilter
// and code search's trigram index do, read from the pattern's syntax tree: a message
// holding a literal that is a whole branch of the pattern matches; one without the
// literals every match contains does not; only the rest is left to the regexp.
// TestPrefiltersDecideAsTheRegexpDoes holds every pattern of the spec's bundles to its
// regexp on every message of the bundle vectors.

// prefilter decides a pattern from literals where it can: sure holds the literals of the
// branches of the pattern (an alternation, or one branch) that are nothing but literals
// (no class, repetition or anchor they leave out), finding one of which is a match;
// exact says every branch is such, so that finding none is no match; root is what every
// match contains (all of a concatenation's literals, one of an alternation's), finding
// which is needed for a match.
type prefilter struct {
	sure  *filterNode
	exact bool
	root  *filterNode
	// foldedWords: a case-folded literal has a word boundary, read in the fold, which is
	// the message byte for byte only when as long (no Kelvin sign or long s folded); a
	// message whose fold is not is left to the regexp.
	foldedWords bool
	// rest is the regexp of the branches sure does not decide, when there are others: a
	// message none of whose sure literals holds matches the pattern when it matches rest.
	rest *search
	// whole is the pattern's own search, when it begins with a literal (else nil: the
	// condition's regexp runs).
	whole *search
}

// search finds a match of a regexp every match of which begins with one of a few
// literals (after \b or \B, perhaps): only where one of them is, an anchored regexp
// (^ and the pattern) is run from there, where Go's regexp would try every position of
// the message. The anchored regexp starts a byte early when the byte before is ASCII
// (^(?s:.) consumes it), so that a \b or \B reads it as the whole message's would; a
// byte that is not ASCII reads as the start of the text does (no word character). A
// pattern ^L.*R (L a literal) is R searched from the end of L to the line's end.
type search struct {
	re       *regexp.Regexp // the regexp, unanchored
	firsts   []literal      // what every match (of R) begins with (not anchored themselves)
	anchored *regexp.Regexp // ^(?:R)
	after    *regexp.Regexp // ^(?s:.)(?:R)
	prefix   string         // L, when the pattern is ^L.*R
	anyLine  bool           // the .* of ^L.*R crosses lines ((?s))
}

// newSearch is the search of re (a pattern's branches, simplified), or nil when re does
// not compile from its syntax; anchored is nil when no few literals begin every match.
func newSearch(re *syntax.Regexp) *search {
	compiled, err := regexp.Compile(re.String())
	if err != nil {
		return nil
	}
	out := &search{re: compiled}
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op == syntax.OpConcat && len(re.Sub) >= 3 && re.Sub[0].Op == syntax.OpBeginText && re.Sub[1].Op == syntax.OpLiteral &&
		re.Sub[1].Flags&syntax.FoldCase == 0 && re.Sub[2].Op == syntax.OpStar &&
		(re.Sub[2].Sub[0].Op == syntax.OpAnyCharNotNL || re.Sub[2].Sub[0].Op == syntax.OpAnyChar) {
		lit, ok := literalOf(re.Sub[1])
		if !ok || len(re.Sub) == 3 {
			return out
		}
		out.prefix, out.anyLine = lit.text, re.Sub[2].Sub[0].Op == syntax.OpAnyChar
		re = &syntax.Regexp{Op: syntax.OpConcat, Sub: re.Sub[3:]}
		if len(re.Sub) == 1 {
			re = re.Sub[0]
		}
	}
	firsts, ok := firstLiterals(re)
	if !ok || len(firsts) > maxLiterals || beginsAnywhere(re) {
		out.prefix = ""
		return out
	}
	anchored, err1 := regexp.Compile(`^(?:` + re.String() + `)`)
	after, err2 := regexp.Compile(`^(?s:.)(?:` + re.String() + `)`)
	if err1 != nil || err2 != nil {
		out.prefix = ""
		return out
	}
	out.firsts, out.anchored, out.after = firsts, anchored, after
	return out
}

// firstLiterals are literals one of which begins every match of re (ok: re is made so).
func firstLiterals(re *syntax.Regexp) ([]literal, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		lit, ok := literalOf(re)
		return []literal{lit}, ok
	case syntax.OpCapture, syntax.OpPlus:
		return firstLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return firstLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if sub.Op != syntax.OpWordBoundary && sub.Op != syntax.OpNoWordBoundary {
				return firstLiterals(sub)
			}
		}
	case syntax.OpAlternate:
		var out []literal
		for _, sub := range re.Sub {
			lits, ok := firstLiterals(sub)
			if !ok {
				return nil, false
			}
			out = append(out, lits...)
		}
		return out, true
	}
	return nil, false
}

// beginsAnywhere: re holds ^ (of the text or a line), which a text cut short would read
// otherwise.
func beginsAnywhere(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpBeginLine {
		return true
	}
	for _, sub := range re.Sub {
		if beginsAnywhere(sub) {
			return true
		}
	}
	return false
}

// match is whether message matches; folded is the message folded (foldASCII), made when
// first needed.
func (s *search) match(message string, folded *string) bool {
	if s.anchored == nil {
		return s.re.MatchString(message)
	}
	from, to := 0, len(message) // where a match of R may begin
	if s.prefix != "" {
		if !strings.HasPrefix(message, s.prefix) {
			return false
		}
		from = len(s.prefix)
		if line := strings.IndexByte(message[from:], '\n'); line >= 0 && !s.anyLine {
			to = from + line
		}
	}
	for i := range s.firsts {
		lit := &s.firsts[i]
		text := message
		if lit.fold {
			if *folded == "" && message != "" {
				*folded = foldASCII(message)
			}
			if len(*folded) != len(message) { // a Kelvin sign or long s folded: positions differ
				return s.re.MatchString(message)
			}
			text = *folded
		}
		for at := from; at <= to; {
			k := strings.Index(text[at:], lit.text)
			if k < 0 || at+k > to {
				break
			}
			at += k
			if at > 0 && message[at-1] < utf8.RuneSelf {
				if s.after.MatchString(message[at-1:]) {
					return true
				}
			} else if s.anchored.MatchString(message[at:]) {
				return true
			}
			at++
		}
	}
	return false
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
// found in the message folded by foldASCII); at the start or the end of the message when
// the pattern anchors it there (^ and $, which without (?m) are the text's ends).
type literal struct {
	text       string
	fold       bool
	start, end bool
	// wordStart and wordEnd: the pattern puts \b (an ASCII word boundary, as Go's regexp
	// reads it) before or after the literal; text is then byte for byte the message (or
	// its fold, when that is as long: ASCII letters lowered, every other byte as it is).
	wordStart, wordEnd bool
}

// in is whether the literal is in text (the message, or the message folded).
func (l *literal) in(text string) bool {
	if l.wordStart || l.wordEnd {
		return l.bounded(text)
	}
	switch {
	case l.start && l.end:
		return text == l.text
	case l.start:
		return strings.HasPrefix(text, l.text)
	case l.end:
		return strings.HasSuffix(text, l.text)
	}
	return strings.Contains(text, l.text)
}

// bounded is in for a literal with word boundaries: some occurrence (at the ends when
// anchored) has a boundary where \b asks for one.
func (l *literal) bounded(text string) bool {
	from, last := 0, len(text)-len(l.text)
	if l.end {
		from = max(last, 0)
	}
	if l.start {
		last = min(last, 0)
	}
	for from <= last {
		i := strings.Index(text[from:last+len(l.text)], l.text)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(l.text)
		if (!l.wordStart || isWordByte(text, i-1) != isWordByte(text, i)) &&
			(!l.wordEnd || isWordByte(text, j-1) != isWordByte(text, j)) {
			return true
		}
		from = i + 1
	}
	return false
}

// isWordByte is whether text has an ASCII word character (\w) at i; outside text, no.
func isWordByte(text string, i int) bool {
	if i < 0 || i >= len(text) {
		return false
	}
	c := text[i]
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
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
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	branches := []*syntax.Regexp{re}
	if re.Op == syntax.OpAlternate {
		branches = re.Sub
	}
	p := &prefilter{sure: &filterNode{op: filterAny}, exact: true}
	var inexact []*syntax.Regexp // the branches sure leaves to the regexp
	for _, branch := range branches {
		literals, ok := exactly(branch)
		p.exact = p.exact && ok
		if !ok {
			inexact = append(inexact, branch)
		}
		for _, l := range literals {
			p.sure.subs = append(p.sure.subs, &filterNode{op: filterLiteral, lit: l})
			p.foldedWords = p.foldedWords || (l.fold && (l.wordStart || l.wordEnd))
		}
	}
	if n := len(p.sure.subs); n == 0 || n > maxLiterals {
		p.sure, p.exact, p.foldedWords, inexact = nil, false, false, nil
	}
	if !p.exact {
		// a match is a match of one branch; when sure decides every exact branch (it
		// holds all their literals), what is left needs what a match of another holds
		rest := re
		if inexact != nil && len(inexact) < len(branches) {
			rest = &syntax.Regexp{Op: syntax.OpAlternate, Sub: inexact}
			if len(inexact) == 1 {
				rest = inexact[0]
			}
			p.rest = newSearch(rest) // nil if it would not compile: the whole runs
		}
		if p.root = required(rest); p.root != nil && p.root.count() > maxLiterals {
			p.root = nil
		}
	}
	if p.whole = newSearch(re); p.whole != nil && p.whole.anchored == nil {
		p.whole = nil
	}
	if p.sure == nil && p.root == nil && p.whole == nil {
		return nil
	}
	return p
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
			return n.lit.in(message)
		}
		if *folded == "" && message != "" {
			*folded = foldASCII(message)
		}
		return n.lit.in(*folded)
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

// decide is whether the message matches, when the literals decide it (decided);
// folded is the message folded (foldASCII), made when first needed.
func (p *prefilter) decide(message string, folded *string) (match, decided bool) {
	match, decided, _ = p.check(message, folded)
	return match, decided
}

// check is decide, and when undecided, whether the sure literals were read and none
// held (rest: then p.rest, when there is one, answers for the pattern).
func (p *prefilter) check(message string, folded *string) (match, decided, rest bool) {
	if p.foldedWords {
		if *folded == "" && message != "" {
			*folded = foldASCII(message)
		}
		if len(*folded) != len(message) {
			return false, false, false
		}
	}
	if p.sure != nil && p.sure.holds(message, folded) {
		return true, true, false
	}
	if p.exact || (p.root != nil && !p.root.holds(message, folded)) {
		return false, true, false
	}
	return false, false, p.sure != nil
}

// matches is whether the message matches the pattern whose regexp is whole.
func (p *prefilter) matches(message string, folded *string, whole *regexp.Regexp) bool {
	match, decided, rest := p.check(message, folded)
	switch {
	case decided:
		return match
	case rest && p.rest != nil:
		return p.rest.match(message, folded)
	case p.whole != nil:
		return p.whole.match(message, folded)
	}
	return whole.MatchString(message)
}

// exactly is every text re matches, when they are few, none empty, and all of one case
// (folded or not): then a search for re is a search for any of them (at the message's
// start or end when re begins with ^ or ends with $).
func exactly(re *syntax.Regexp) ([]literal, bool) {
	var start, end, wordStart, wordEnd bool
	if re.Op == syntax.OpConcat {
		subs := re.Sub
		if len(subs) > 0 && subs[0].Op == syntax.OpBeginText {
			start, subs = true, subs[1:]
		}
		if len(subs) > 0 && subs[0].Op == syntax.OpWordBoundary {
			wordStart, subs = true, subs[1:]
		}
		if len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpEndText {
			end, subs = true, subs[:len(subs)-1]
		}
		if len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpWordBoundary {
			wordEnd, subs = true, subs[:len(subs)-1]
		}
		if len(subs) == 0 {
			return nil, false
		}
		re = &syntax.Regexp{Op: syntax.OpConcat, Sub: subs}
	}
	texts, fold, ok := expand(re)
	if !ok || len(texts) == 0 {
		return nil, false
	}
	out := make([]literal, 0, len(texts))
	for _, text := range texts {
		if text == "" {
			return nil, false
		}
		out = append(out, literal{text: text, fold: fold == foldYes, start: start, end: end, wordStart: wordStart, wordEnd: wordEnd})
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
// case; everything else as it is (written a run at a time between the bytes it changes).
func foldASCII(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	run := 0 // where the text not yet written begins
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				b.WriteString(text[run:i])
				b.WriteByte(c + 'a' - 'A')
				run = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if folded, ok := asciiFolds[r]; ok && size > 1 {
			b.WriteString(text[run:i])
			b.WriteByte(folded)
			run = i + size
		}
		i += size
	}
	if run == 0 {
		return text
	}
	b.WriteString(text[run:])
	return b.String()
}
