// Package harness is what the load harnesses under test/bench share: the production manager in a child
// process (start, stop, peak RSS, CPU time, its metrics scraped over HTTP), the machine's load, and helpers for
// filling garden-in-a-box.
package harness
