package faultproxy

import (
	"maps"
	"slices"
)

// Stats is what the proxy counted since it started.
type Stats struct {
	// PerSecond is the number of requests that arrived in each second (Unix time), faulted ones included.
	PerSecond map[int64]int
	// Faults counts the injected faults by kind.
	Faults map[Kind]int
	// Forwarded counts the requests passed upstream; Watches the watches among them while faults were on (each
	// gets a random lifetime).
	Forwarded, Watches int
}

// Stats returns a copy of the counters.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{PerSecond: maps.Clone(p.perSecond), Faults: maps.Clone(p.faults), Forwarded: p.forwarded, Watches: p.watches}
}

// Requests is the number of requests counted.
func (s Stats) Requests() int {
	n := 0
	for _, c := range s.PerSecond {
		n += c
	}
	return n
}

// TotalFaults is the number of faults injected, of all kinds.
func (s Stats) TotalFaults() int {
	n := 0
	for _, c := range s.Faults {
		n += c
	}
	return n
}

// Seconds are the seconds with requests, in order.
func (s Stats) Seconds() []int64 { return slices.Sorted(maps.Keys(s.PerSecond)) }
