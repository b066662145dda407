package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// documentJSON converts a configuration document (YAML or JSON) to JSON, refusing duplicate keys: the conversion
// keeps the last value of a key given twice, so one of two settings would silently be lost.
func documentJSON(data []byte) ([]byte, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %w", err)
	}
	if err := duplicateYAMLKeys(data); err != nil {
		return nil, err
	}
	return js, nil
}

// duplicateYAMLKeys reports every key given twice in the same mapping, at any depth, with its path (the style of the
// validation errors: shoot.dns.secretName, shoot.operatorOIDC[0].clientID) and the lines of both.
func duplicateYAMLKeys(data []byte) error {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("not YAML or JSON: %w", err)
	}
	var errs []error
	var walk func(n *yamlv3.Node, path string)
	walk = func(n *yamlv3.Node, path string) {
		switch n.Kind {
		case yamlv3.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yamlv3.MappingNode:
			seen := map[string]int{} // key -> line
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Kind != yamlv3.ScalarNode || k.Tag == "!!merge" {
					continue // a merge (<<) may repeat what the mapping overrides; other keys are refused by the conversion
				}
				p := joinKey(path, k.Value)
				if line, dup := seen[k.Value]; dup {
					errs = append(errs, fmt.Errorf("%s: duplicate key (lines %d and %d)", p, line, k.Line))
				} else {
					seen[k.Value] = k.Line
				}
				walk(v, p)
			}
		case yamlv3.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(&doc, "")
	return errors.Join(errs...)
}

// duplicateJSONKeys reports every key given twice in the same object of the JSON document data, at any depth, with
// its path. encoding/json keeps the last value. data must be valid JSON (decode it first): a syntax error ends the
// check without a report.
func duplicateJSONKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var errs []error
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				p := joinKey(path, k)
				if seen[k] {
					errs = append(errs, fmt.Errorf("%s: duplicate key", p))
				}
				seen[k] = true
				if err := walk(p); err != nil {
					return err
				}
			}
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		default:
			return nil
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	if err := walk(""); err != nil {
		return nil
	}
	return errors.Join(errs...)
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
