// Package docscheck keeps the documentation true: it reads the repository's markdown and resolves what the text
// names — flags, environment variables, metrics, configuration keys and links — against the code and the tree. The
// checks run as tests of this package in `make test` (and alone with `make docs-check`); the helpers are exported
// for other tests that check links, e.g. the alerts' runbook URLs.
package docscheck

import (
	"regexp"
	"strings"
	"unicode"
)

// Doc is a markdown file split into what the checks look at.
type Doc struct {
	Path string
	// Code holds inline code spans and the lines of fenced code blocks, each with its line number.
	Code []Snippet
	// Links are the targets of inline links, images and reference definitions outside code.
	Links []Snippet
	// Prose is the text outside code, line by line.
	Prose []Snippet
	// Anchors are the fragment identifiers GitHub gives the headings (and explicit <a id/name> anchors).
	Anchors map[string]bool
	// Lines are the raw lines; Lines[n-1] is line n.
	Lines []string
}

// Snippet is a piece of text and where it is.
type Snippet struct {
	Line int
	Text string
	// Block is true for a line of a fenced code block; Lang is the block's info string.
	Block bool
	Lang  string
}

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)\\s*([^`\\s]*)")
	inlineCode = regexp.MustCompile("(`+)(.+?)(`+)")
	inlineLink = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	heading    = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
)

// Parse splits markdown text.
func Parse(path, text string) *Doc {
	d := &Doc{Path: path, Anchors: map[string]bool{}, Lines: strings.Split(text, "\n")}
	seen := map[string]int{}
	inBlock, lang, marker := false, "", ""
	for i, line := range d.Lines {
		n := i + 1
		if m := fence.FindStringSubmatch(line); m != nil && (!inBlock || m[1] == marker) {
			if inBlock {
				inBlock = false
			} else {
				inBlock, lang, marker = true, m[2], m[1]
			}
			continue
		}
		if inBlock {
			d.Code = append(d.Code, Snippet{Line: n, Text: line, Block: true, Lang: lang})
			continue
		}
		for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
			if m[1] == m[3] {
				d.Code = append(d.Code, Snippet{Line: n, Text: strings.TrimSpace(m[2])})
			}
		}
		prose := inlineCode.ReplaceAllString(line, "")
		d.Prose = append(d.Prose, Snippet{Line: n, Text: prose})
		for _, m := range inlineLink.FindAllStringSubmatch(prose, -1) {
			d.Links = append(d.Links, Snippet{Line: n, Text: m[1]})
		}
		if m := refDef.FindStringSubmatch(prose); m != nil {
			d.Links = append(d.Links, Snippet{Line: n, Text: m[1]})
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			d.Anchors[m[1]] = true
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			slug := Slug(m[2])
			if k := seen[slug]; k > 0 {
				d.Anchors[slug+"-"+itoa(k)] = true
			} else {
				d.Anchors[slug] = true
			}
			seen[slug]++
		}
	}
	return d
}

// Slug is the fragment GitHub derives from a heading: code and link markup and punctuation (emphasis asterisks
// included) removed, lower case, spaces to hyphens; letters, digits, hyphens and underscores stay.
func Slug(headingText string) string {
	t := inlineCode.ReplaceAllString(headingText, "$2")
	t = inlineLink.ReplaceAllStringFunc(t, func(s string) string { return s[strings.Index(s, "[")+1 : strings.Index(s, "]")] })
	var b strings.Builder
	for _, r := range strings.ToLower(t) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
