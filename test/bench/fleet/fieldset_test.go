package main

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestPickTakesWhatAFieldSetNames: the apply body of a copied shoot is the part of the copy its template's apply
// entry owns: members by name, list elements by key, value and index in the copy's order, leaves whole; defaulted
// fields the entry does not name stay out (an apply of them would hand them to the operator).
func TestPickTakesWhatAFieldSetNames(t *testing.T) {
	var obj, set, want map[string]any
	for raw, into := range map[string]*map[string]any{
		`{"metadata": {"name": "c-1", "labels": {"a": "1", "b": "2"}},
		  "spec": {"seedName": "s", "region": "r", "workers": [{"name": "w2", "max": 3, "zones": ["z1"]}, {"name": "w1", "max": 1, "min": 1}],
		           "tolerations": ["x", "y"], "hosts": ["h0", "h1"], "vpa": {"enabled": true}}}`: &obj,
		`{"f:metadata": {"f:labels": {".": {}, "f:a": {}}},
		  "f:spec": {"f:region": {}, "f:workers": {"k:{\"name\":\"w1\"}": {".": {}, "f:name": {}, "f:max": {}},
		                                          "k:{\"name\":\"w2\"}": {".": {}, "f:name": {}, "f:zones": {}}},
		             "f:tolerations": {"v:\"y\"": {}}, "f:hosts": {"i:1": {}}}}`: &set,
		`{"metadata": {"labels": {"a": "1"}},
		  "spec": {"region": "r", "workers": [{"name": "w2", "zones": ["z1"]}, {"name": "w1", "max": 1}],
		           "tolerations": ["y"], "hosts": ["h1"]}}`: &want,
	} {
		if err := json.Unmarshal([]byte(raw), into); err != nil {
			t.Fatal(err)
		}
	}
	got := pick(obj, set)
	if !reflect.DeepEqual(got, any(want)) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("pick:\n got %s\nwant %s", g, w)
	}
}
