// Package plans runs one Runtime per KEB plan, shaped as KEB's create step shapes it, against garden-in-a-box (its
// own process: the garden-in-a-box starts once per process with one set of options).
package plans
