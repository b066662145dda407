package app

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func TestGardenerHealthIntervalFlag(t *testing.T) {
	o := DefaultOptions()
	o.GardenerProject = "kyma"
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--gardener-health-interval=2s"}); err != nil || o.GardenerHealthInterval != 2*time.Second {
		t.Fatalf("--gardener-health-interval=2s: %s, %v", o.GardenerHealthInterval, err)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("2s rejected: %v", err)
	}
	o.GardenerHealthInterval = -time.Second
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--gardener-health-interval") {
		t.Errorf("a negative interval: %v, want an error naming the flag", err)
	}
}

// TestBindingReleaseHoldFlag: the flag overrides deletion.bindingReleaseHold of the configuration (the sandbox sets
// it short); unset keeps the configuration's value; zero is refused.
func TestBindingReleaseHoldFlag(t *testing.T) {
	parse := func(args ...string) (*Options, error) {
		o := DefaultOptions()
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		o.BindFlags(fs)
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		return &o, o.ResolveConfig()
	}
	o, err := parse()
	if err != nil || o.Config.Deletion.DeletionPolicy().BindingReleaseHold != 2*time.Hour {
		t.Errorf("no flag: %v, %v; want the configuration's default 2h", o.Config.Deletion.BindingReleaseHold, err)
	}
	o, err = parse("--binding-release-hold=45s")
	if err != nil || o.Config.Deletion.DeletionPolicy().BindingReleaseHold != 45*time.Second {
		t.Errorf("--binding-release-hold=45s: %v, %v", o.Config.Deletion.BindingReleaseHold, err)
	}
	if _, err = parse("--binding-release-hold=0s"); err == nil || !strings.Contains(err.Error(), "--binding-release-hold") {
		t.Errorf("--binding-release-hold=0s: %v; want an error naming the flag", err)
	}
}
