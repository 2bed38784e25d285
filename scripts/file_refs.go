//go:build ignore

// Command file_refs checks that every Go file a comment names exists: it
// reads the comments of every .go file under the directories on its
// command line (testdata and hidden directories skipped) and looks for
// names ending in .go. A name with a slash (model/plan.go) must exist
// relative to the repository root or to the commenting file's directory;
// a bare name (file_refs.go) must exist in the commenting file's
// directory or, when the same comment says "package P", in a directory
// named P. It prints one line per missing file and exits 1 when there is
// any, so a file that is renamed or split leaves no comment pointing at
// it. Markdown is not read (scripts/docs_links.go checks its links).
//
// Usage: go run scripts/file_refs.go .
package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// goFile matches a file name ending in .go (not pkg.go.dev, not go.mod).
var goFile = regexp.MustCompile(`[A-Za-z0-9_./-]*[A-Za-z0-9_]\.go\b`)

// pkgName matches "package P" in a comment.
var pkgName = regexp.MustCompile(`\bpackage ([a-z][a-z0-9]*)\b`)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/file_refs.go DIR ...")
		os.Exit(2)
	}
	var files []string
	dirs := map[string][]string{} // base name → directories
	for _, root := range os.Args[1:] {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				name := d.Name()
				if p != root && (strings.HasPrefix(name, ".") || name == "testdata") {
					return filepath.SkipDir
				}
				dirs[name] = append(dirs[name], p)
				return nil
			}
			if strings.HasSuffix(p, ".go") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "file_refs: %v\n", err)
			os.Exit(2)
		}
	}
	bad := 0
	fset := token.NewFileSet()
	for _, f := range files {
		full, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			fmt.Fprintf(os.Stderr, "file_refs: %v\n", err)
			os.Exit(2)
		}
		dir := filepath.Dir(f)
		for _, cg := range full.Comments {
			text := cg.Text()
			var pkgs []string
			for _, m := range pkgName.FindAllStringSubmatch(text, -1) {
				pkgs = append(pkgs, m[1])
			}
			for _, loc := range goFile.FindAllStringIndex(text, -1) {
				name := text[loc[0]:loc[1]]
				if loc[1] < len(text) && text[loc[1]] == '.' {
					continue // a host name such as pkg.go.dev
				}
				if loc[0] > 0 && text[loc[0]-1] == ':' {
					continue // a URL
				}
				if !exists(name, dir, pkgs, dirs) {
					line := fset.Position(cg.Pos()).Line + strings.Count(text[:loc[0]], "\n")
					fmt.Printf("%s:%d: %s does not exist\n", f, line, name)
					bad++
				}
			}
		}
	}
	if bad > 0 {
		fmt.Printf("file_refs: %d comment(s) name a missing file\n", bad)
		os.Exit(1)
	}
}

// exists reports whether the file a comment in dir names exists.
func exists(name, dir string, pkgs []string, dirs map[string][]string) bool {
	if strings.Contains(name, "/") {
		return isFile(name) || isFile(filepath.Join(dir, name))
	}
	if isFile(filepath.Join(dir, name)) {
		return true
	}
	for _, p := range pkgs {
		for _, d := range dirs[p] {
			if isFile(filepath.Join(d, name)) {
				return true
			}
		}
	}
	return false
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
