package vector

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chunking bounds. A chunk holds whole paragraphs up to MaxChunkChars characters; a
// longer paragraph is cut at sentence or word boundaries. Each chunk after the first of
// a section starts with the end of the previous one (up to OverlapChars characters), so
// that a sentence cut between two chunks is found in either.
const (
	MaxChunkChars = 1200
	OverlapChars  = 150
)

// Chunk splits text into chunks for embedding: by Markdown headings and blank-line
// paragraphs, packed up to MaxChunkChars, with a little overlap. A chunk under a heading
// begins with that heading, so that it carries its context. Blank text gives no chunks.
func Chunk(text string) []string {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	var chunks []string
	var cur strings.Builder // the chunk being filled
	heading := ""           // the current section's heading line
	curHasBody := false
	flush := func(keepOverlap bool) {
		if !curHasBody {
			cur.Reset()
			return
		}
		s := strings.TrimSpace(cur.String())
		chunks = append(chunks, s)
		cur.Reset()
		curHasBody = false
		if keepOverlap {
			if heading != "" {
				cur.WriteString(heading)
				cur.WriteString("\n\n")
			}
			if tail := overlapTail(s, heading); tail != "" {
				cur.WriteString("… ")
				cur.WriteString(tail)
				cur.WriteString("\n\n")
			}
		}
	}
	for _, para := range paragraphs(text) {
		if isHeading(para) {
			flush(false)
			heading = para
			cur.WriteString(heading)
			cur.WriteString("\n\n")
			continue
		}
		for _, piece := range splitLong(para, MaxChunkChars-runeLen(heading)-OverlapChars-8) {
			if curHasBody && runeLen(cur.String())+runeLen(piece)+2 > MaxChunkChars {
				flush(true)
			}
			if cur.Len() == 0 && heading != "" {
				cur.WriteString(heading)
				cur.WriteString("\n\n")
			}
			cur.WriteString(piece)
			cur.WriteString("\n\n")
			curHasBody = true
		}
	}
	flush(false)
	return chunks
}

// paragraphs splits text at blank lines; a heading line is a paragraph of its own.
func paragraphs(text string) []string {
	var out []string
	var cur []string
	end := func() {
		if p := strings.TrimSpace(strings.Join(cur, "\n")); p != "" {
			out = append(out, p)
		}
		cur = cur[:0]
	}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			inFence = !inFence
		}
		switch {
		case trimmed == "" && !inFence:
			end()
		case !inFence && isHeading(trimmed):
			end()
			out = append(out, trimmed)
		default:
			cur = append(cur, strings.TrimRight(line, " \t"))
		}
	}
	end()
	return out
}

// isHeading reports whether a line is a Markdown ATX heading ("# Title" to "###### Title").
func isHeading(line string) bool {
	if strings.Contains(line, "\n") {
		return false
	}
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && n < len(line) && line[n] == ' ' && strings.TrimSpace(line[n:]) != ""
}

// splitLong cuts a paragraph longer than max characters at sentence ends, else at
// spaces, else anywhere.
func splitLong(p string, max int) []string {
	max = maxInt(max, 200)
	var out []string
	for runeLen(p) > max {
		cut := cutPoint(p, max)
		out = append(out, strings.TrimSpace(p[:cut]))
		p = strings.TrimSpace(p[cut:])
	}
	if p != "" {
		out = append(out, p)
	}
	return out
}

// cutPoint is a byte offset at most max characters into s, at the last sentence end in
// the second half of that span, else the last space, else max characters.
func cutPoint(s string, max int) int {
	limit := byteOffset(s, max)
	span := s[:limit]
	for _, sep := range []string{". ", "? ", "! ", "\n", "; ", ", ", " "} {
		if i := strings.LastIndex(span, sep); i > limit/2 {
			return i + len(sep)
		}
	}
	return limit
}

// overlapTail is the end of a chunk to repeat at the start of the next: its last
// sentences, at most OverlapChars characters, starting at a word.
func overlapTail(s, heading string) string {
	s = strings.TrimSpace(strings.TrimPrefix(s, heading))
	if runeLen(s) <= OverlapChars {
		return ""
	}
	start := byteOffset(s, runeLen(s)-OverlapChars)
	tail := s[start:]
	for _, sep := range []string{". ", "? ", "! ", "\n", " "} {
		if i := strings.Index(tail, sep); i >= 0 && i+len(sep) < len(tail) {
			return strings.TrimSpace(tail[i+len(sep):])
		}
	}
	return strings.TrimSpace(tail)
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// byteOffset is the byte offset of the n-th character of s (len(s) past the end).
func byteOffset(s string, n int) int {
	if n <= 0 {
		return 0
	}
	i := 0
	for pos := range s {
		if i == n {
			return pos
		}
		i++
	}
	return len(s)
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// Words splits text into lower-case words of letters and digits: the tokens both the
// built-in embedder and keyword queries use.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
