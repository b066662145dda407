package main

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryLimitShare is the part of the container's memory limit the Go heap may grow to before the garbage collector
// works harder: the rest is for goroutine stacks, the runtime and what is not heap.
const memoryLimitShare = 0.9

// cgroupMemoryFiles are where cgroup v2 and v1 state a container's memory limit.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// setMemoryLimit gives the Go runtime a soft memory limit of 90 % of the container's limit unless GOMEMLIMIT sets
// one. Without it the heap grows to twice what is live before a collection (GOGC=100): at fleet size the peak RSS was
// mostly garbage not yet collected (docs/operations/scale.md), and a pod at its limit is killed, not slowed down.
// It returns the limit set (0: none) and why.
func setMemoryLimit(lookupEnv func(string) (string, bool), readFile func(string) ([]byte, error)) (int64, string) {
	if v, ok := lookupEnv("GOMEMLIMIT"); ok {
		return 0, "GOMEMLIMIT=" + v + " set by the environment"
	}
	limit, from, ok := containerMemoryLimit(readFile)
	if !ok {
		return 0, "no container memory limit found"
	}
	soft := int64(float64(limit) * memoryLimitShare)
	debug.SetMemoryLimit(soft)
	return soft, fmt.Sprintf("%.0f %% of the container limit %d B (%s)", memoryLimitShare*100, limit, from)
}

// containerMemoryLimit reads the first cgroup file that states a limit ("max" and v1's unlimited value state none).
func containerMemoryLimit(readFile func(string) ([]byte, error)) (int64, string, bool) {
	for _, f := range cgroupMemoryFiles {
		b, err := readFile(f)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		n, err := strconv.ParseInt(v, 10, 64)
		// cgroup v1 reports "no limit" as a huge number (a page-rounded MaxInt64).
		if err != nil || n <= 0 || n >= 1<<60 {
			return 0, "", false
		}
		return n, f, true
	}
	return 0, "", false
}
