package ports

import "time"

// Clock tells the current time. Domain functions take `now` as a parameter; controllers read it from a Clock so
// tests can move time without sleeping.
type Clock interface {
	// Now returns the current time. It never blocks.
	Now() time.Time
}
