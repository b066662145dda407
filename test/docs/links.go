package docscheck

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// RepoURL is the repository's address; links to its blob/main and tree/main pages are checked like relative links.
const RepoURL = "https://github.com/kyma-project/kim"

// Repo resolves paths and links inside the repository at Root.
type Repo struct {
	Root string
	docs map[string]*Doc
}

// NewRepo returns a resolver for the repository at root.
func NewRepo(root string) *Repo { return &Repo{Root: root, docs: map[string]*Doc{}} }

// Doc parses the markdown file at the repository-relative path (cached).
func (r *Repo) Doc(rel string) (*Doc, error) {
	if d, ok := r.docs[rel]; ok {
		return d, nil
	}
	data, err := os.ReadFile(filepath.Join(r.Root, rel))
	if err != nil {
		return nil, err
	}
	d := Parse(rel, string(data))
	r.docs[rel] = d
	return d, nil
}

// CheckLink reports whether target, written in the repository-relative file from, points at something that exists:
// a file or directory of the repository and, for a markdown file, the heading its fragment names. Links to other
// sites are not followed (nil); links to this repository's GitHub pages are resolved in the work tree.
func (r *Repo) CheckLink(from, target string) error {
	var rel, fragment string
	switch {
	case strings.HasPrefix(target, RepoURL+"/blob/main/"), strings.HasPrefix(target, RepoURL+"/tree/main/"):
		rest := strings.TrimPrefix(strings.TrimPrefix(target, RepoURL+"/blob/main/"), RepoURL+"/tree/main/")
		rel, fragment, _ = strings.Cut(rest, "#")
	case target == RepoURL || strings.HasPrefix(target, RepoURL+"#") || strings.HasPrefix(target, RepoURL+"/"):
		if strings.TrimRight(target, "/") != RepoURL {
			return fmt.Errorf("link %s into this repository is not a blob/main or tree/main address this check can resolve", target)
		}
		return nil
	case strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:"):
		return nil
	case strings.HasPrefix(target, "#"):
		rel, fragment = from, target[1:]
	default:
		path, frag, _ := strings.Cut(target, "#")
		path, _, _ = strings.Cut(path, "?")
		unescaped, err := url.PathUnescape(path)
		if err != nil {
			return fmt.Errorf("link %s: %w", target, err)
		}
		fragment = frag
		if strings.HasPrefix(unescaped, "/") {
			rel = strings.TrimPrefix(unescaped, "/")
		} else {
			rel = filepath.ToSlash(filepath.Join(filepath.Dir(from), unescaped))
		}
	}
	rel = filepath.ToSlash(filepath.Clean(rel))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("link %s leaves the repository", target)
	}
	info, err := os.Stat(filepath.Join(r.Root, rel))
	if err != nil {
		return fmt.Errorf("link %s: %s does not exist", target, rel)
	}
	if fragment == "" || info.IsDir() {
		return nil
	}
	if !strings.HasSuffix(rel, ".md") {
		if strings.HasPrefix(fragment, "L") { // a line anchor (#L12) of a source file
			return nil
		}
		return fmt.Errorf("link %s: fragment #%s on a file that is not markdown", target, fragment)
	}
	d, err := r.Doc(rel)
	if err != nil {
		return err
	}
	if !d.Anchors[fragment] {
		return fmt.Errorf("link %s: %s has no heading with anchor #%s", target, rel, fragment)
	}
	return nil
}
