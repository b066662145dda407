package app

import (
	"errors"
	"math"
	"strconv"
	"time"
)

// float32Value is a flag holding a float32, parsed strictly as the standard numeric flags are: the whole value must
// be a finite number ("50abc", "NaN" and "Inf" are errors, where fmt.Sscanf took the "50" of "50abc").
type float32Value struct{ p *float32 }

func (f float32Value) Set(v string) error {
	n, err := strconv.ParseFloat(v, 32)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return errors.New("out of range")
	case err != nil:
		return errors.New("not a number")
	case math.IsNaN(n) || math.IsInf(n, 0):
		return errors.New("not a finite number")
	}
	*f.p = float32(n)
	return nil
}

func (f float32Value) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatFloat(float64(*f.p), 'g', -1, 32)
}

func (f float32Value) Get() any { return *f.p }

// unsetDuration is a duration flag whose negative value means "not set" (another source, the configuration file,
// decides). The help shows no default for it instead of "-1ns": String is empty while it is unset, as it is for the
// zero value the flag package compares the default with.
type unsetDuration struct{ p *time.Duration }

func (d unsetDuration) Set(v string) error {
	n, err := time.ParseDuration(v)
	if err != nil {
		return errors.New("not a duration (such as 72h or 90m)")
	}
	*d.p = n
	return nil
}

func (d unsetDuration) String() string {
	if d.p == nil || *d.p < 0 {
		return ""
	}
	return d.p.String()
}

func (d unsetDuration) Get() any { return *d.p }
