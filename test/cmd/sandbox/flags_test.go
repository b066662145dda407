package main

import "testing"

func TestSandboxGardenFaultsFlag(t *testing.T) {
	f, err := parseSandboxFlags([]string{"--garden-faults", "0.3"})
	if err != nil || f.gardenFaults != 0.3 {
		t.Fatalf("--garden-faults 0.3: %+v, %v", f.gardenFaults, err)
	}
	for _, bad := range []string{"-0.1", "1.5"} {
		if _, err := parseSandboxFlags([]string{"--garden-faults", bad}); err == nil {
			t.Errorf("--garden-faults %s accepted", bad)
		}
	}
}
