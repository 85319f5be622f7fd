package display

import (
	"fmt"
	"html"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// markdownHTML renders Markdown as an HTML fragment: the text/html form of
// a Markdown output, for the frontends that do not render text/markdown
// (classic Notebook drops it from notebooks it does not trust). It knows
// the CommonMark blocks notebooks use (paragraphs, headings, block quotes,
// lists, fenced and indented code, thematic breaks) and GitHub's pipe
// tables; inline, code spans, emphasis, links, images, autolinks,
// backslash escapes and hard breaks.
//
// What it shows comes from lm-eval outputs, which anyone may have written,
// so nothing of the source reaches the HTML unescaped: raw HTML and
// entities show as the text they are, and a link or image keeps its
// address only when it has no scheme or http, https or mailto (otherwise
// the text is shown without the link).
func markdownHTML(src string) string {
	src = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\x00", "\uFFFD").Replace(src)
	var b strings.Builder
	blocks(&b, strings.Split(src, "\n"), false)
	return strings.TrimSuffix(b.String(), "\n")
}

// blocks renders lines as block elements. In a tight list item, a
// paragraph is its text alone, without <p>.
func blocks(b *strings.Builder, lines []string, tight bool) {
	for i := 0; i < len(lines); {
		line := lines[i]
		t, indent := dedent(line)
		switch {
		case t == "":
			i++
		case indent >= 4:
			j := i
			for j < len(lines) {
				if t, ind := dedent(lines[j]); t != "" && ind < 4 {
					break
				}
				j++
			}
			code := lines[i:j]
			for len(code) > 0 && strings.TrimSpace(code[len(code)-1]) == "" {
				code = code[:len(code)-1]
			}
			for k, l := range code {
				code[k] = cutIndent(l, 4)
			}
			b.WriteString("<pre><code>" + html.EscapeString(strings.Join(code, "\n")) + "\n</code></pre>\n")
			i = j
		case fence(t) > 0:
			i = fenced(b, lines, i, indent)
		case heading(t) > 0:
			n := heading(t)
			text := strings.TrimSpace(t[n:])
			text = strings.TrimSpace(strings.TrimRight(text, "#")) // a closing sequence
			fmt.Fprintf(b, "<h%d>", n)
			inline(b, text)
			fmt.Fprintf(b, "</h%d>\n", n)
			i++
		case thematicBreak(t):
			b.WriteString("<hr>\n")
			i++
		case strings.HasPrefix(t, ">"):
			var inner []string
			j := i
			for ; j < len(lines); j++ {
				t, ind := dedent(lines[j])
				if ind < 4 && strings.HasPrefix(t, ">") {
					t = strings.TrimPrefix(t[1:], " ")
					inner = append(inner, t)
					continue
				}
				// A lazy continuation of the quote's paragraph.
				if t == "" || len(inner) == 0 || strings.TrimSpace(inner[len(inner)-1]) == "" || startsBlock(t, ind) {
					break
				}
				inner = append(inner, t)
			}
			b.WriteString("<blockquote>\n")
			blocks(b, inner, false)
			b.WriteString("</blockquote>\n")
			i = j
		case listItem(t).ok:
			i = list(b, lines, i)
		case i+1 < len(lines) && strings.Contains(t, "|") && tableDelimiter(lines[i+1]) != nil:
			i = table(b, lines, i)
		default:
			j := i + 1
			for j < len(lines) {
				t, ind := dedent(lines[j])
				if t == "" || startsBlock(t, ind) {
					break
				}
				j++
			}
			para := make([]string, j-i)
			for k, l := range lines[i:j] {
				para[k], _ = dedent(l)
			}
			if !tight {
				b.WriteString("<p>")
			}
			inline(b, strings.Join(para, "\n"))
			if !tight {
				b.WriteString("</p>")
			}
			b.WriteString("\n")
			i = j
		}
	}
}

// dedent returns line without its leading spaces (a tab counts four) and
// how many there were; a blank line is "".
func dedent(line string) (string, int) {
	n := 0
	for k, r := range line {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 4 - n%4
		default:
			return line[k:], n
		}
	}
	return "", n
}

// cutIndent removes up to n columns of leading white space.
func cutIndent(line string, n int) string {
	col := 0
	for k, r := range line {
		if col >= n {
			return line[k:]
		}
		switch r {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
			if col > n { // a tab past the cut: the rest of it stays
				return strings.Repeat(" ", col-n) + line[k+1:]
			}
		default:
			return line[k:]
		}
	}
	return ""
}

// startsBlock reports whether a line, t after ind spaces, interrupts a
// paragraph.
func startsBlock(t string, ind int) bool {
	if ind >= 4 {
		return false
	}
	if fence(t) > 0 || heading(t) > 0 || thematicBreak(t) || strings.HasPrefix(t, ">") {
		return true
	}
	// A list interrupts a paragraph when it is not an ordered one starting
	// past 1 (CommonMark), so that "in 2024. The" inside a sentence stays.
	li := listItem(t)
	return li.ok && (!li.ordered || li.start == 1) && strings.TrimSpace(t[li.width:]) != ""
}

// fence returns the length of the code fence t opens with, or 0.
func fence(t string) int {
	if t == "" || (t[0] != '`' && t[0] != '~') {
		return 0
	}
	n := len(t) - len(strings.TrimLeft(t, t[:1]))
	if n < 3 || (t[0] == '`' && strings.Contains(t[n:], "`")) {
		return 0
	}
	return n
}

// fenced renders the fenced code block that opens at lines[i] and returns
// the index of the line after it.
func fenced(b *strings.Builder, lines []string, i, indent int) int {
	t, _ := dedent(lines[i])
	n := fence(t)
	marker := t[:n]
	info := strings.Fields(strings.TrimSpace(t[n:]))
	var code []string
	j := i + 1
	for ; j < len(lines); j++ {
		ct, ind := dedent(lines[j])
		if ind < 4 && strings.HasPrefix(ct, marker) && strings.Trim(ct, marker[:1]+" \t") == "" {
			j++
			break
		}
		code = append(code, cutIndent(lines[j], indent))
	}
	b.WriteString("<pre><code")
	if len(info) > 0 {
		lang := strings.Map(func(r rune) rune {
			if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_+.#", r)) {
				return r
			}
			return -1
		}, info[0])
		if lang != "" {
			b.WriteString(` class="language-` + lang + `"`)
		}
	}
	b.WriteString(">")
	if len(code) > 0 {
		b.WriteString(html.EscapeString(strings.Join(code, "\n")) + "\n")
	}
	b.WriteString("</code></pre>\n")
	return j
}

// heading returns the level of the ATX heading t is, or 0.
func heading(t string) int {
	n := len(t) - len(strings.TrimLeft(t, "#"))
	if n < 1 || n > 6 || (len(t) > n && t[n] != ' ' && t[n] != '\t') {
		return 0
	}
	return n
}

func thematicBreak(t string) bool {
	s := strings.NewReplacer(" ", "", "\t", "").Replace(t)
	return len(s) >= 3 && strings.Trim(s, s[:1]) == "" && strings.ContainsAny(s[:1], "-*_")
}

// item is a list marker.
type item struct {
	ok, ordered bool
	start       int  // of an ordered list
	delim       byte // '-', '*', '+', or '.' or ')' after a number
	width       int  // of the marker and the space after it
}

func listItem(t string) item {
	if t == "" {
		return item{}
	}
	var it item
	switch {
	case strings.ContainsRune("-*+", rune(t[0])):
		it = item{delim: t[0], width: 1}
	default:
		d := 0
		for d < len(t) && d < 9 && t[d] >= '0' && t[d] <= '9' {
			d++
		}
		if d == 0 || d >= len(t) || (t[d] != '.' && t[d] != ')') {
			return item{}
		}
		it.start, _ = strconv.Atoi(t[:d])
		it.ordered, it.delim, it.width = true, t[d], d+1
	}
	if it.width < len(t) && t[it.width] != ' ' && t[it.width] != '\t' {
		return item{}
	}
	spaces := len(t[it.width:]) - len(strings.TrimLeft(t[it.width:], " "))
	if spaces > 4 {
		spaces = 1
	}
	it.width += spaces
	if it.width > len(t) {
		it.width = len(t)
	}
	it.ok = !thematicBreak(t)
	return it
}

// list renders the list that starts at lines[i] and returns the index of
// the line after it.
func list(b *strings.Builder, lines []string, i int) int {
	t, _ := dedent(lines[i])
	first := listItem(t)
	var items [][]string
	loose := false
	blankBefore := false
	j := i
	col := 0
scan:
	for j < len(lines) {
		t, ind2 := dedent(lines[j])
		li := listItem(t)
		switch {
		case t == "":
			blankBefore = true
			j++
			continue
		case ind2 < 4 && li.ok && li.ordered == first.ordered && li.delim == first.delim && (len(items) == 0 || ind2 < col):
			if blankBefore && len(items) > 0 {
				loose = true
			}
			col = ind2 + li.width
			if strings.TrimSpace(t[li.width:]) == "" {
				col = ind2 + li.width + 1
			}
			items = append(items, []string{t[li.width:]})
		case ind2 >= col:
			if blankBefore {
				items[len(items)-1] = append(items[len(items)-1], "")
				loose = true
			}
			items[len(items)-1] = append(items[len(items)-1], cutIndent(lines[j], col))
		case !blankBefore && !startsBlock(t, ind2):
			items[len(items)-1] = append(items[len(items)-1], t) // lazy continuation
		default:
			break scan
		}
		blankBefore = false
		j++
	}
	tag := "ul"
	if first.ordered {
		tag = "ol"
	}
	b.WriteString("<" + tag)
	if first.ordered && first.start != 1 {
		fmt.Fprintf(b, ` start="%d"`, first.start)
	}
	b.WriteString(">\n")
	for _, it := range items {
		b.WriteString("<li>")
		var inner strings.Builder
		blocks(&inner, it, !loose)
		b.WriteString(strings.TrimSuffix(inner.String(), "\n"))
		b.WriteString("</li>\n")
	}
	b.WriteString("</" + tag + ">\n")
	// Trailing blank lines belong to what follows.
	for j > i && strings.TrimSpace(lines[j-1]) == "" {
		j--
	}
	return j
}

// tableDelimiter returns the alignments of a pipe table's delimiter row
// ("", "left", "center", "right"), or nil when line is not one.
func tableDelimiter(line string) []string {
	if !strings.Contains(line, "-") {
		return nil
	}
	var aligns []string
	for _, c := range cells(line) {
		c = strings.TrimSpace(c)
		left, right := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":")
		if strings.Trim(c, ":") == "" || strings.Trim(c, "-:") != "" || strings.Trim(c, ":-") == c {
			return nil
		}
		switch {
		case left && right:
			aligns = append(aligns, "center")
		case right:
			aligns = append(aligns, "right")
		case left:
			aligns = append(aligns, "left")
		default:
			aligns = append(aligns, "")
		}
	}
	return aligns
}

// cells splits a table row at the pipes a backslash does not escape.
func cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var out []string
	var cur strings.Builder
	for k := 0; k < len(line); k++ {
		switch {
		case line[k] == '\\' && k+1 < len(line) && line[k+1] == '|':
			cur.WriteByte('|')
			k++
		case line[k] == '|':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(line[k])
		}
	}
	return append(out, cur.String())
}

// table renders the pipe table that starts at lines[i] and returns the
// index of the line after it.
func table(b *strings.Builder, lines []string, i int) int {
	aligns := tableDelimiter(lines[i+1])
	row := func(tag, line string) {
		b.WriteString("<tr>")
		cs := cells(line)
		for k := range aligns {
			b.WriteString("<" + tag)
			if aligns[k] != "" {
				b.WriteString(` style="text-align:` + aligns[k] + `"`)
			}
			b.WriteString(">")
			if k < len(cs) {
				inline(b, strings.TrimSpace(cs[k]))
			}
			b.WriteString("</" + tag + ">")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("<table>\n<thead>\n")
	row("th", lines[i])
	b.WriteString("</thead>\n<tbody>\n")
	j := i + 2
	for ; j < len(lines); j++ {
		t, ind := dedent(lines[j])
		if t == "" || startsBlock(t, ind) {
			break
		}
		row("td", lines[j])
	}
	b.WriteString("</tbody>\n</table>\n")
	return j
}

// hardBreak stands for a line break the source asks for (two spaces or a
// backslash at the end of a line); markdownHTML removed NULs.
const hardBreak = "\x00"

// inline renders the inline content of a block.
func inline(b *strings.Builder, s string) {
	lines := strings.Split(s, "\n")
	for k := range lines[:len(lines)-1] {
		l := lines[k]
		switch {
		case strings.HasSuffix(l, "  "):
			lines[k] = strings.TrimRight(l, " ") + hardBreak
		case strings.HasSuffix(l, `\`) && !strings.HasSuffix(l, `\\`):
			lines[k] = l[:len(l)-1] + hardBreak
		default:
			lines[k] = strings.TrimRight(l, " ")
		}
	}
	spans(b, strings.TrimRight(strings.Join(lines, "\n"), " "))
}

// spans renders s, one line of inline Markdown or several.
func spans(b *strings.Builder, s string) {
	plain := 0 // start of the text not yet written
	flush := func(k int) {
		b.WriteString(html.EscapeString(s[plain:k]))
	}
	for k := 0; k < len(s); {
		c := s[k]
		switch {
		case c == hardBreak[0]:
			flush(k)
			b.WriteString("<br>")
			k++
			plain = k
		case c == '\\' && k+1 < len(s) && isPunct(s[k+1]):
			flush(k)
			b.WriteString(html.EscapeString(s[k+1 : k+2]))
			k += 2
			plain = k
		case c == '`':
			n := run(s, k, '`')
			end := closingTicks(s, k+n, n)
			if end < 0 {
				k += n // the backticks are text
				continue
			}
			flush(k)
			code := strings.ReplaceAll(s[k+n:end], "\n", " ")
			code = strings.ReplaceAll(code, hardBreak, " ")
			if len(code) > 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
				code = code[1 : len(code)-1]
			}
			b.WriteString("<code>" + html.EscapeString(code) + "</code>")
			k = end + n
			plain = k
		case c == '*' || c == '_':
			n := run(s, k, c)
			if n >= 2 {
				if end := closer(s, k+2, c, 2); end > k+2 {
					flush(k)
					b.WriteString("<strong>")
					spans(b, s[k+2:end])
					b.WriteString("</strong>")
					k = end + 2
					plain = k
					continue
				}
			}
			if end := closer(s, k+1, c, 1); end > k+1 && opens(s, k, 1, c) {
				flush(k)
				b.WriteString("<em>")
				spans(b, s[k+1:end])
				b.WriteString("</em>")
				k = end + 1
				plain = k
				continue
			}
			k += n
		case c == '[' || (c == '!' && k+1 < len(s) && s[k+1] == '['):
			img := c == '!'
			open := k
			if img {
				open++
			}
			text, dest, title, end, ok := link(s, open)
			if !ok {
				k = open + 1
				continue
			}
			flush(k)
			switch {
			case img && safeURL(dest):
				b.WriteString(`<img src="` + html.EscapeString(dest) + `" alt="` + html.EscapeString(text) + `"`)
				if title != "" {
					b.WriteString(` title="` + html.EscapeString(title) + `"`)
				}
				b.WriteString(">")
			case img:
				b.WriteString(html.EscapeString(text))
			case safeURL(dest):
				b.WriteString(`<a href="` + html.EscapeString(dest) + `" rel="noopener noreferrer"`)
				if title != "" {
					b.WriteString(` title="` + html.EscapeString(title) + `"`)
				}
				b.WriteString(">")
				spans(b, text)
				b.WriteString("</a>")
			default:
				spans(b, text)
			}
			k = end
			plain = k
		case c == '<':
			end := strings.IndexByte(s[k:], '>')
			if end < 0 {
				k++
				continue
			}
			u := s[k+1 : k+end]
			if !strings.Contains(u, ":") || strings.ContainsAny(u, " <\n") || !safeURL(u) || !strings.Contains(u, ":") {
				k++
				continue
			}
			flush(k)
			b.WriteString(`<a href="` + html.EscapeString(u) + `" rel="noopener noreferrer">` + html.EscapeString(u) + "</a>")
			k += end + 1
			plain = k
		default:
			k++
		}
	}
	flush(len(s))
}

func isPunct(c byte) bool {
	return c < utf8.RuneSelf && unicode.IsPunct(rune(c)) || strings.IndexByte("$+<=>^`|~", c) >= 0
}

// run is the length of the run of c at s[k].
func run(s string, k int, c byte) int {
	n := 0
	for k+n < len(s) && s[k+n] == c {
		n++
	}
	return n
}

// closingTicks returns where a run of exactly n backticks starts at or
// after k, or -1.
func closingTicks(s string, k, n int) int {
	for k < len(s) {
		i := strings.IndexByte(s[k:], '`')
		if i < 0 {
			return -1
		}
		i += k
		m := run(s, i, '`')
		if m == n {
			return i
		}
		k = i + m
	}
	return -1
}

// opens reports whether the n delimiters c at s[k] can open emphasis:
// not followed by white space, and for _ not inside a word (snake_case
// names stay as they are).
func opens(s string, k, n int, c byte) bool {
	if k+n >= len(s) || isSpace(s[k+n]) {
		return false
	}
	return c != '_' || k == 0 || !isWord(s[k-1])
}

// closer returns where a run of n delimiters c that closes emphasis starts
// at or after k (not after white space, and for _ not before a word
// character), or -1. Code spans are skipped.
func closer(s string, k int, c byte, n int) int {
	if !opens(s, k-n, n, c) {
		return -1
	}
	for i := k; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '`':
			m := run(s, i, '`')
			if end := closingTicks(s, i+m, m); end > 0 {
				i = end + m - 1
			}
		case c:
			m := run(s, i, c)
			if m == n || (n == 1 && m == 3) || (n == 2 && m == 3) {
				if !isSpace(s[i-1]) && (c != '_' || i+m >= len(s) || !isWord(s[i+m])) {
					return i
				}
			}
			i += m - 1
		}
	}
	return -1
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == hardBreak[0] }

func isWord(c byte) bool {
	return c >= utf8.RuneSelf || c == '_' || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))
}

// link parses [text](dest "title") at s[k] == '['.
func link(s string, k int) (text, dest, title string, end int, ok bool) {
	depth := 0
	i := k
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
			continue
		case '[':
			depth++
		case ']':
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if i >= len(s)-1 || s[i+1] != '(' {
		return "", "", "", 0, false
	}
	text = s[k+1 : i]
	j := i + 2
	depth = 1
	for ; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
			continue
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if j >= len(s) {
		return "", "", "", 0, false
	}
	inside := strings.TrimSpace(s[i+2 : j])
	dest = inside
	if sp := strings.IndexAny(inside, " \t\n"); sp >= 0 {
		dest, title = inside[:sp], strings.TrimSpace(inside[sp:])
		if len(title) < 2 || !strings.ContainsAny(title[:1], `"'(`) {
			return "", "", "", 0, false
		}
		title = title[1 : len(title)-1]
	}
	dest = strings.TrimSuffix(strings.TrimPrefix(dest, "<"), ">")
	return text, dest, title, j + 1, true
}

// safeURL reports whether an address may be a link: relative, or with an
// http, https or mailto scheme, and no control characters, which browsers
// remove ("java\tscript:").
func safeURL(u string) bool {
	for _, r := range u {
		if r < ' ' || r == 0x7f {
			return false
		}
	}
	i := strings.IndexAny(u, ":/?#")
	if i < 0 || u[i] != ':' {
		return true
	}
	switch strings.ToLower(u[:i]) {
	case "http", "https", "mailto":
		return true
	}
	return false
}
