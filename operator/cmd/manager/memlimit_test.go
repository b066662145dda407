package main

import (
	"io/fs"
	"runtime/debug"
	"testing"
)

func TestMemoryLimitFollowsTheContainer(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1)) // restore whatever the test binary had
	noEnv := func(string) (string, bool) { return "", false }
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(name string) ([]byte, error) {
			if v, ok := m[name]; ok {
				return []byte(v), nil
			}
			return nil, fs.ErrNotExist
		}
	}
	cases := []struct {
		name  string
		env   func(string) (string, bool)
		files map[string]string
		want  int64
	}{
		{"cgroup v2 limit", noEnv, map[string]string{"/sys/fs/cgroup/memory.max": "1073741824\n"}, 966367641},
		{"cgroup v1 limit", noEnv, map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912\n"}, 483183820},
		{"cgroup v2 without limit", noEnv, map[string]string{"/sys/fs/cgroup/memory.max": "max\n"}, 0},
		{"cgroup v1 without limit", noEnv, map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712"}, 0},
		{"no cgroup files", noEnv, nil, 0},
		{"GOMEMLIMIT wins", func(k string) (string, bool) { return "300MiB", k == "GOMEMLIMIT" },
			map[string]string{"/sys/fs/cgroup/memory.max": "1073741824"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			debug.SetMemoryLimit(1 << 62)
			got, why := setMemoryLimit(c.env, files(c.files))
			if got != c.want {
				t.Fatalf("limit %d (%s), want %d", got, why, c.want)
			}
			applied := debug.SetMemoryLimit(-1)
			if c.want > 0 && applied != c.want {
				t.Fatalf("runtime limit %d, want %d", applied, c.want)
			}
			if c.want == 0 && applied != 1<<62 {
				t.Fatalf("runtime limit changed to %d although none should be set", applied)
			}
		})
	}
}
