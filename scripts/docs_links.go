//go:build ignore

// Command docs_links checks that every relative link in the Markdown files
// named on its command line resolves: the file or directory exists, and a
// #fragment names a heading of the target page (GitHub's anchor rules:
// lower case, punctuation dropped, spaces to hyphens, -1, -2, … for repeats).
// Links inside fenced code blocks and inline code are not links. External
// links (a scheme such as https:) are not checked. It prints one line per
// broken link and exits 1 when there is any.
//
// Usage: go run scripts/docs_links.go README.md docs/*.md
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// link matches [text](target) and ![alt](target); the target ends at the
// first space (an optional title follows) or closing parenthesis.
var link = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// inlineCode matches `code` spans, removed before links are looked for.
var inlineCode = regexp.MustCompile("`[^`]*`")

// scheme matches an absolute URL's scheme (https:, mailto:, …).
var scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/docs_links.go FILE.md ...")
		os.Exit(2)
	}
	anchors := map[string]map[string]bool{}
	bad := 0
	for _, file := range os.Args[1:] {
		links, err := links(file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "docs_links: %v\n", err)
			os.Exit(2)
		}
		for _, l := range links {
			if msg := check(file, l.target, anchors); msg != "" {
				fmt.Printf("%s:%d: %s: %s\n", file, l.line, l.target, msg)
				bad++
			}
		}
	}
	if bad > 0 {
		fmt.Printf("docs_links: %d broken link(s)\n", bad)
		os.Exit(1)
	}
}

type ref struct {
	line   int
	target string
}

// links returns the relative links of a Markdown file outside code.
func links(file string) ([]ref, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []ref
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range link.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
			if !scheme.MatchString(m[1]) {
				out = append(out, ref{n, m[1]})
			}
		}
	}
	return out, sc.Err()
}

// check returns why target, linked from file, does not resolve ("" if it does).
func check(file, target string, anchors map[string]map[string]bool) string {
	path, frag, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
		if _, err := os.Stat(dest); err != nil {
			return "no such file"
		}
	}
	if frag == "" {
		return ""
	}
	if !strings.HasSuffix(dest, ".md") {
		return "anchor into a file that is not Markdown"
	}
	a, ok := anchors[dest]
	if !ok {
		var err error
		if a, err = headings(dest); err != nil {
			return err.Error()
		}
		anchors[dest] = a
	}
	if !a[frag] {
		return "no heading with this anchor in " + dest
	}
	return ""
}

// headings returns the anchors GitHub gives the headings of a Markdown file.
func headings(file string) (map[string]bool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slug := slugify(text)
		if k := seen[slug]; k > 0 {
			out[fmt.Sprintf("%s-%d", slug, k)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out, nil
}

// slugify is GitHub's heading anchor: links reduced to their text, lower
// case, letters, digits, '-' and '_' kept, spaces to '-', the rest dropped.
func slugify(text string) string {
	text = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(text, "$1")
	var sb strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			sb.WriteRune(r)
		case r == ' ':
			sb.WriteByte('-')
		}
	}
	return sb.String()
}
