package main

// Named after no source file: the rules the documentation keeps (every
// fenced block marked, every link resolved, the flag table whole, the
// pages short), checked fast; readme_test.go runs the marked blocks.

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// docsRoot is the repository's root, seen from this package's folder.
const docsRoot = "../.."

// docsRunSnippets names every block marked "<!-- readme-test: NAME -->":
// TestReadmeExamples runs each of them, and TestDocsBlocksAreMarked fails
// on a marked block missing from this list, so a new recipe cannot be
// documented without being run.
var docsRunSnippets = []string{
	"go-setup", "go-quick", "python-install", "python-quick", "seed", "run", "cors", "install",
	"go", "go-remote", "go-parallel", "node", "python", "shell", "retries", "tls", "tls-go",
	"walk", "generate",
}

// docsFiles lists the documentation a user reads, relative to the root:
// README.md, CONTRIBUTING.md and every page under docs/.
func docsFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md", "CONTRIBUTING.md"}
	for _, p := range pages {
		files = append(files, filepath.ToSlash(strings.TrimPrefix(p, docsRoot+string(filepath.Separator))))
	}
	return files
}

func docsRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(docsRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docsSnippet returns the code block that follows "<!-- readme-test: NAME
// -->" in whichever documentation file holds it; exactly one must.
func docsSnippet(t *testing.T, name string) string {
	t.Helper()
	var found []string
	var code string
	for _, file := range docsFiles(t) {
		_, rest, ok := strings.Cut(docsRead(t, file), "<!-- readme-test: "+name+" -->\n```")
		if !ok {
			continue
		}
		found = append(found, file)
		_, rest, _ = strings.Cut(rest, "\n") // the fence's language tag
		var closed bool
		if code, _, closed = strings.Cut(rest, "```\n"); !closed {
			t.Fatalf("%s: the snippet %q has no closing fence", file, name)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the snippet %q is marked in %d files (%v), want exactly one", name, len(found), found)
	}
	return code
}

// docsFence is a fenced block's opening or closing line.
var docsFence = regexp.MustCompile("^ *```")

// docsMarker is the line that must come right before every opening fence:
// a block run by TestReadmeExamples (readme-test), by .ci/ship
// (ship-test), by .ci/python (python-test) or by .ci/node (node-test), one
// that cannot run here (not run: why), or one that is no command at all
// (example: what it is).
var docsMarker = regexp.MustCompile(`^<!-- (readme-test|ship-test|python-test|node-test|not run|example): ([^ ].*?) -->$`)

// TestDocsBlocksAreMarked: every fenced block in the documentation is
// either run by a test or says why not, every block a test runs is marked
// exactly once, and every json block (an example body included) is JSON.
func TestDocsBlocksAreMarked(t *testing.T) {
	ship, python, node := docsRead(t, ".ci/ship"), docsRead(t, ".ci/python"), docsRead(t, ".ci/node")
	marked := map[string]int{}
	for _, file := range docsFiles(t) {
		lines := strings.Split(docsRead(t, file), "\n")
		inside := false
		for i, line := range lines {
			if !docsFence.MatchString(line) {
				continue
			}
			if inside {
				inside = false
				continue
			}
			inside = true
			if strings.TrimSpace(line) == "```json" {
				body, _, _ := strings.Cut(strings.Join(lines[i+1:], "\n"), "```")
				if !json.Valid([]byte(body)) {
					t.Errorf("%s:%d: a json block that is not valid JSON", file, i+1)
				}
			}
			prev := ""
			if i > 0 {
				prev = strings.TrimSpace(lines[i-1])
			}
			m := docsMarker.FindStringSubmatch(prev)
			if m == nil {
				t.Errorf("%s:%d: a fenced block without a marker on the line before it (readme-test, ship-test, python-test, node-test, not run or example: see CONTRIBUTING.md)", file, i+1)
				continue
			}
			switch m[1] {
			case "readme-test":
				marked[m[2]]++
				if !slices.Contains(docsRunSnippets, m[2]) {
					t.Errorf("%s:%d: readme-test %q is not among the snippets TestReadmeExamples runs (docsRunSnippets)", file, i+1, m[2])
				}
			case "python-test":
				// .ci/python writes a page's python-test blocks to files
				// (python/ci/doc_recipes.py) and runs them.
				if !strings.Contains(python, file) {
					t.Errorf("%s:%d: python-test %q, but .ci/python does not run the recipes of %s", file, i+1, m[2], file)
				}
			case "node-test":
				if file != "docs/node.md" && file != "README.md" || !regexp.MustCompile(`(?m)^[^#]*\b(recipe|doc_block) `+regexp.QuoteMeta(m[2])+`\b`).MatchString(node) {
					t.Errorf("%s:%d: node-test %q is not read by .ci/node", file, i+1, m[2])
				}
			case "ship-test":
				if !strings.Contains(ship, "same_as_readme "+m[2]+" ") && !strings.Contains(ship, "readme_block "+m[2]+" ") {
					t.Errorf("%s:%d: ship-test %q is not read by .ci/ship", file, i+1, m[2])
				}
			}
		}
		if inside {
			t.Errorf("%s: a fenced block is never closed", file)
		}
	}
	for _, name := range docsRunSnippets {
		if marked[name] != 1 {
			t.Errorf("the snippet %q is marked %d times, want once", name, marked[name])
		}
	}
}

// TestDocsPageLengths: the README stays a five-minute read, and each page
// of docs/ one task or reference.
func TestDocsPageLengths(t *testing.T) {
	for _, file := range docsFiles(t) {
		n := strings.Count(docsRead(t, file), "\n")
		limit := 399
		if file == "README.md" {
			limit = 300
		}
		if n > limit {
			t.Errorf("%s has %d lines, at most %d", file, n, limit)
		}
	}
}

// TestDocsFlagTable: docs/running.md's flag table lists every flag, with
// its environment variable, and nothing that is not a flag.
func TestDocsFlagTable(t *testing.T) {
	page := docsRead(t, "docs/running.md")
	flags := map[string]bool{}
	newFlagSet(&options{}).VisitAll(func(f *flag.Flag) {
		flags[f.Name] = true
		row := fmt.Sprintf("| `-%s` | `%s` |", f.Name, envName(f.Name))
		if actionFlags[f.Name] {
			row = fmt.Sprintf("| `-%s` | | ", f.Name) // no variable
		}
		if !strings.Contains(page, row) {
			t.Errorf("docs/running.md has no row starting %s", row)
		}
	})
	for _, m := range regexp.MustCompile("(?m)^\\| `-([a-z-]+)` \\| `RESOURCEDIR_").FindAllStringSubmatch(page, -1) {
		if !flags[m[1]] {
			t.Errorf("docs/running.md has a row for -%s, which is no flag", m[1])
		}
	}
}

// docsLink is an inline Markdown link or image: [text](target).
var docsLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks: every relative link in the documentation names a file
// that exists and, with #anchor, a heading of that file as GitHub makes
// its anchor.
func TestDocsLinks(t *testing.T) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		a := docsAnchors(docsRead(t, file))
		anchors[file] = a
		return a
	}
	for _, file := range docsFiles(t) {
		for n, line := range strings.Split(docsWithoutCode(docsRead(t, file)), "\n") {
			for _, m := range docsLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), path)))
					if _, err := os.Stat(filepath.Join(docsRoot, dest)); err != nil {
						t.Errorf("%s:%d: link to %s: %v", file, n+1, target, err)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s:%d: link to %s: an anchor in a file that is not Markdown", file, n+1, target)
					continue
				}
				if !anchorsOf(dest)[anchor] {
					t.Errorf("%s:%d: link to %s: %s has no heading with the anchor #%s", file, n+1, target, dest, anchor)
				}
			}
		}
	}
}

// docsWithoutCode blanks the lines of fenced blocks (links there are code,
// not links), keeping the line count.
func docsWithoutCode(text string) string {
	lines := strings.Split(text, "\n")
	inside := false
	for i, line := range lines {
		if docsFence.MatchString(line) {
			inside = !inside
			lines[i] = ""
		} else if inside {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// docsAnchors returns the anchors GitHub gives a Markdown file's headings:
// the heading's text lower-cased, Markdown's code and link syntax dropped,
// every character but letters, digits, spaces, hyphens and underscores
// removed, spaces made hyphens, and a repeated anchor suffixed -1, -2, ….
func docsAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(docsWithoutCode(text), "\n") {
		trimmed := strings.TrimLeft(line, "#")
		if trimmed == line || len(line)-len(trimmed) > 6 || !strings.HasPrefix(trimmed, " ") {
			continue
		}
		heading := strings.TrimSpace(trimmed)
		heading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(heading, "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// TestDocsAnchors pins docsAnchors to GitHub's rules on the headings these
// pages use.
func TestDocsAnchors(t *testing.T) {
	got := docsAnchors("# resourcedir\n## Any language in CI, with `--`\n## How faithful is it for my tenant?\n" +
		"### Testing a client's retries\n## Under `resourcedir --`\n## Notes\n## Notes\n```\n# not a heading\n```\n")
	want := []string{"resourcedir", "any-language-in-ci-with---", "how-faithful-is-it-for-my-tenant",
		"testing-a-clients-retries", "under-resourcedir---", "notes", "notes-1"}
	for _, w := range want {
		if !got[w] {
			t.Errorf("no anchor %q in %v", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("anchors %v, want %v", got, want)
	}
}
