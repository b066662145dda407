package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"
)

// Overlay holds configuration keys stated by another source than the configuration document: the previous
// infrastructure manager's converter configuration (LoadConverterConfig) and its flags. ParseOverlaid merges it into
// the document.
//
// A stated value fills a key the document leaves out and must equal a value the document sets: two sources that
// disagree stop the manager, naming the key and both sources, because a silent winner would change every shoot the
// loser was meant to describe (a Kubernetes version, a DNS provider, an ACL) without anyone noticing. A default is
// weaker: it is the previous manager's behaviour where the source says nothing, fills a key the document leaves out
// and gives way to a value the document sets.
type Overlay struct {
	entries []overlayEntry
}

type overlayEntry struct {
	// path are the keys of the value in the configuration document.
	path []string
	// value is JSON-shaped (what encoding/json writes for it). A map or a list is one value: it is compared and
	// set as a whole, so two sources never mix the fields of one issuer or one tenant.
	value any
	// origin names the source for messages, e.g. "converter.dns.secretName of /converter-config/converter_config.json".
	origin string
	// weak: a default, never a conflict.
	weak bool
}

// State records that origin sets the key path to value.
func (o *Overlay) State(origin string, value any, path ...string) {
	o.entries = append(o.entries, overlayEntry{path: path, value: value, origin: origin})
}

// Default records the previous manager's behaviour for the key path where origin says nothing.
func (o *Overlay) Default(origin string, value any, path ...string) {
	o.entries = append(o.entries, overlayEntry{path: path, value: value, origin: origin, weak: true})
}

// Stated returns the value origin stated (not a default) for path, JSON-shaped; ok is false when none did.
func (o *Overlay) Stated(path ...string) (value any, origin string, ok bool) {
	if o == nil {
		return nil, "", false
	}
	for _, e := range o.entries {
		if !e.weak && slices.Equal(e.path, path) {
			v, err := normalize(e.value)
			if err != nil {
				return nil, "", false
			}
			return v, e.origin, true
		}
	}
	return nil, "", false
}

// Len is the number of keys the overlay holds (stated and defaults).
func (o *Overlay) Len() int {
	if o == nil {
		return 0
	}
	return len(o.entries)
}

// ParseOverlaid is Parse of data with the keys of the overlays merged in (see Overlay). data may be nil: then the
// overlays are the whole configuration, with the defaults of this operator for everything they do not state.
// Conflicts are errors naming the key and both sources; a merged document that does not validate names the key
// and, where an overlay set it, the source.
func ParseOverlaid(data []byte, overlays ...*Overlay) (*OperatorConfig, error) {
	doc := map[string]any{"apiVersion": APIVersion, "kind": Kind}
	if data != nil {
		js, err := documentJSON(data)
		if err != nil {
			return nil, err
		}
		var parsed any
		if err := json.Unmarshal(js, &parsed); err != nil {
			return nil, fmt.Errorf("not YAML or JSON: %w", err)
		}
		m, ok := parsed.(map[string]any)
		if !ok {
			return nil, errors.New("the configuration must be a mapping of keys")
		}
		doc = m
	}
	origins := map[string]source{} // joined path -> the overlay entry that put the value there
	var conflicts []error
	for _, o := range overlays {
		if o == nil {
			continue
		}
		for _, e := range o.entries {
			if err := merge(doc, e, origins); err != nil {
				conflicts = append(conflicts, err)
			}
		}
	}
	if len(conflicts) > 0 {
		return nil, errors.Join(conflicts...)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("merge the configuration: %w", err)
	}
	cfg, err := Parse(js)
	if err != nil {
		return nil, annotate(err, origins)
	}
	return cfg, nil
}

// source is where a merged value came from.
type source struct {
	origin string
	weak   bool
}

// merge puts one entry into doc (see Overlay for the rules) and records where the value came from.
func merge(doc map[string]any, e overlayEntry, origins map[string]source) error {
	key := strings.Join(e.path, ".")
	value, err := normalize(e.value)
	if err != nil {
		return fmt.Errorf("%s: %s cannot be written as configuration: %w", key, e.origin, err)
	}
	m := doc
	for i, k := range e.path[:len(e.path)-1] {
		next, found := m[k]
		if !found || next == nil {
			child := map[string]any{}
			m[k] = child
			m = child
			continue
		}
		child, ok := next.(map[string]any)
		if !ok {
			above := strings.Join(e.path[:i+1], ".")
			return fmt.Errorf("%s: %s sets a key below %s, which %s sets to %s", key, e.origin, above,
				sourceOf(above, origins), show(next))
		}
		m = child
	}
	last := e.path[len(e.path)-1]
	current, found := m[last]
	before, fromOverlay := origins[key]
	switch {
	case !found:
		m[last] = value
		origins[key] = source{e.origin, e.weak}
	case equalValues(current, value):
		if fromOverlay && before.weak && !e.weak {
			origins[key] = source{e.origin, false}
		}
	case e.weak:
		// A default gives way to what is set.
	case fromOverlay && before.weak:
		m[last] = value
		origins[key] = source{e.origin, false}
	default:
		return fmt.Errorf("%s: %s says %s, %s says %s; set it in one place only, or to the same value",
			key, sourceOf(key, origins), show(current), e.origin, show(value))
	}
	return nil
}

func sourceOf(key string, origins map[string]source) string {
	if s, ok := origins[key]; ok {
		return s.origin
	}
	return "the configuration"
}

// normalize turns v into what encoding/json decodes its encoding to, so that values from Go and from YAML compare.
func normalize(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// equalValues compares JSON-shaped values; duration strings compare by duration ("720h" equals "720h0m0s").
func equalValues(a, b any) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok && bok {
		ad, aerr := time.ParseDuration(as)
		bd, berr := time.ParseDuration(bs)
		return aerr == nil && berr == nil && ad == bd
	}
	return false
}

func show(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}

// annotate adds to every "<key>: <problem>" line of a validation error the overlay source that set the key (or the
// key above it), so the message leads to the line to fix in the converter configuration or the flag.
func annotate(err error, origins map[string]source) error {
	if len(origins) == 0 {
		return err
	}
	keys := make([]string, 0, len(origins))
	for k := range origins {
		keys = append(keys, k)
	}
	// Longest first: the most specific source wins.
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	lines := strings.Split(err.Error(), "\n")
	changed := false
	for i, line := range lines {
		key, _, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		for _, k := range keys {
			if key == k || strings.HasPrefix(key, k+".") || strings.HasPrefix(key, k+"[") || strings.HasPrefix(k, key+".") {
				lines[i] = line + " (set by " + origins[k].origin + ")"
				changed = true
				break
			}
		}
	}
	if !changed {
		return err
	}
	return &annotatedError{msg: strings.Join(lines, "\n"), err: err}
}

type annotatedError struct {
	msg string
	err error
}

func (e *annotatedError) Error() string { return e.msg }
func (e *annotatedError) Unwrap() error { return e.err }
