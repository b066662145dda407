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
