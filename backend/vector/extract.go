package vector

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
	"golang.org/x/net/html"
)

// ErrUnreadable is the class of extraction failures caused by the document itself (an
// unknown format, a broken PDF, no text): the caller's fault, never the server's.
var ErrUnreadable = errors.New("unreadable document")

func unreadable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnreadable}, args...)...)
}

// Format is a document format the knowledge bases read.
type Format string

const (
	FormatText     Format = "text/plain"
	FormatMarkdown Format = "text/markdown"
	FormatHTML     Format = "text/html"
	FormatPDF      Format = "application/pdf"
)

// DetectFormat picks the format from the file name's extension, then the declared
// content type, then the bytes. Unknown binary content is refused.
func DetectFormat(name, contentType string, data []byte) (Format, error) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".txt", ".text", ".log", ".csv":
		return FormatText, nil
	case ".md", ".markdown":
		return FormatMarkdown, nil
	case ".html", ".htm", ".xhtml":
		return FormatHTML, nil
	case ".pdf":
		return FormatPDF, nil
	}
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		switch mt {
		case "text/plain":
			return FormatText, nil
		case "text/markdown", "text/x-markdown":
			return FormatMarkdown, nil
		case "text/html", "application/xhtml+xml":
			return FormatHTML, nil
		case "application/pdf":
			return FormatPDF, nil
		}
	}
	if bytes.HasPrefix(data, []byte("%PDF-")) {
		return FormatPDF, nil
	}
	head := bytes.ToLower(bytes.TrimSpace(data[:min(len(data), 512)]))
	if bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html")) {
		return FormatHTML, nil
	}
	if utf8.Valid(data) && !bytes.ContainsRune(data, 0) {
		return FormatText, nil
	}
	return "", unreadable("%q is not a format knowledge bases read: upload text (.txt), Markdown (.md), HTML (.html) or PDF (.pdf)", name)
}

// ExtractText returns the text of a document: text and Markdown as they are (UTF-8
// required), HTML without its markup (headings become Markdown headings, so that
// chunking keeps sections), PDF by its text layer.
func ExtractText(f Format, data []byte) (string, error) {
	var text string
	switch f {
	case FormatText, FormatMarkdown:
		if !utf8.Valid(data) {
			return "", unreadable("the document is not valid UTF-8 text")
		}
		text = string(data)
	case FormatHTML:
		if !utf8.Valid(data) {
			return "", unreadable("the HTML document is not valid UTF-8")
		}
		text = htmlText(data)
	case FormatPDF:
		var err error
		if text, err = pdfText(data); err != nil {
			return "", err
		}
	default:
		return "", unreadable("unknown format %q", string(f))
	}
	if strings.TrimSpace(text) == "" {
		if f == FormatPDF {
			return "", unreadable("the PDF has no text layer (a scan?); only PDFs with text can be read")
		}
		return "", unreadable("the document has no text")
	}
	return text, nil
}

// htmlText walks the HTML and keeps its visible text: block elements end paragraphs,
// h1 to h6 become "# " headings, script, style and the head are dropped.
func htmlText(data []byte) string {
	z := html.NewTokenizer(bytes.NewReader(data))
	var sb strings.Builder
	skip := 0 // inside script, style, head, noscript, template
	line := func() { sb.WriteString("\n\n") }
	for {
		switch z.Next() {
		case html.ErrorToken:
			return collapseBlank(sb.String())
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			switch tag {
			case "script", "style", "head", "noscript", "template", "svg":
				skip++
			case "h1", "h2", "h3", "h4", "h5", "h6":
				line()
				sb.WriteString(strings.Repeat("#", int(tag[1]-'0')) + " ")
			case "br":
				sb.WriteString("\n")
			case "li":
				sb.WriteString("\n- ")
			case "p", "div", "section", "article", "ul", "ol", "table", "tr", "blockquote", "pre", "header", "footer", "main", "nav", "dl", "dt", "dd", "hr":
				line()
			case "td", "th":
				sb.WriteString(" ")
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "script", "style", "head", "noscript", "template", "svg":
				if skip > 0 {
					skip--
				}
			case "h1", "h2", "h3", "h4", "h5", "h6", "p", "div", "section", "article", "ul", "ol", "table", "tr", "blockquote", "pre", "li":
				line()
			}
		case html.TextToken:
			if skip == 0 {
				t := strings.Join(strings.Fields(string(z.Text())), " ")
				if t != "" {
					if s := sb.String(); s != "" && !strings.HasSuffix(s, " ") && !strings.HasSuffix(s, "\n") {
						sb.WriteString(" ")
					}
					sb.WriteString(t)
				}
			}
		}
	}
}

// collapseBlank trims each line and leaves at most one blank line between paragraphs.
func collapseBlank(s string) string {
	var out []string
	blank := true
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			if !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		out = append(out, l)
		blank = false
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// pdfText reads the text layer of every page, a blank line between pages. The PDF
// library panics on some malformed files; that is the document's fault, and says so.
func pdfText(data []byte) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", unreadable("the PDF could not be read (it may be damaged or use an unsupported feature)")
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if strings.Contains(err.Error(), "encrypt") || strings.Contains(err.Error(), "password") {
			return "", unreadable("the PDF is encrypted; upload one without a password")
		}
		return "", unreadable("the PDF could not be read: %v", err)
	}
	var sb strings.Builder
	for i := 1; i <= r.NumPage(); i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		t, err := p.GetPlainText(nil) // each page's own fonts: names repeat across pages
		if err != nil {
			return "", unreadable("page %d of the PDF could not be read: %v", i, err)
		}
		sb.WriteString(t)
		sb.WriteString("\n\n")
	}
	return sb.String(), nil
}
