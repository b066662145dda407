package app

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// EnvPrefix starts the environment variable of every manager flag: --gardener-qps is KIM_GARDENER_QPS. Under OLM,
// Subscription.spec.config.env sets these (OLM cannot change the Deployment's arguments, only add environment).
const EnvPrefix = "KIM_"

// EnvName is the environment variable that sets the flag name.
func EnvName(flagName string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// ApplyEnv gives every flag of fs an environment fallback: a non-empty KIM_<FLAG> (see EnvName) is applied before the
// command line is parsed, so a flag given on the command line still wins, and an unset or empty variable keeps the
// default (an empty value is what the Deployment's downward-API variables hold outside OLM). It appends the variable
// to each flag's usage text and returns the names of the flags it set. A value the flag rejects is an error naming
// the variable.
func ApplyEnv(fs *flag.FlagSet, lookup func(string) (string, bool)) ([]string, error) {
	var applied []string
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		env := EnvName(f.Name)
		f.Usage += " [env " + env + "]"
		v, ok := lookup(env)
		if !ok || strings.TrimSpace(v) == "" {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", env, v, err))
			return
		}
		applied = append(applied, f.Name)
	})
	return applied, errors.Join(errs...)
}
