package garden

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Logs keeps the operator's log lines so tests can assert on them (for example: no conflicts).
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Count returns how many lines contain any of the substrings.
func (l *Logs) Count(substrings ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range strings.Split(l.buf.String(), "\n") {
		for _, s := range substrings {
			if strings.Contains(line, s) {
				n++
				break
			}
		}
	}
	return n
}

// Mark is the position after everything logged so far: ErrorsSince(Mark()) returns only what comes later.
func (l *Logs) Mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Len()
}

// ErrorsSince returns the last max error lines logged after mark (see Mark): a failed test shows what the operator
// stumbled over while it waited, not only the state it saw last.
func (l *Logs) ErrorsSince(mark, max int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if mark > l.buf.Len() {
		mark = l.buf.Len()
	}
	var out []string
	for _, line := range strings.Split(string(l.buf.Bytes()[mark:]), "\n") {
		if strings.Contains(line, `"level":"error"`) || strings.Contains(line, `"msg":"action failed"`) {
			out = append(out, line)
		}
	}
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return out
}

var logs struct {
	once sync.Once
	sink *Logs
}

// CaptureLogs sends controller-runtime's logs (the operator's) to the returned sink, and also to the file named by
// $KIM_E2E_LOG when set. The first call in the process wins; later calls return the same sink.
func CaptureLogs() *Logs {
	logs.once.Do(func() {
		logs.sink = &Logs{}
		var w io.Writer = logs.sink
		if path := os.Getenv("KIM_E2E_LOG"); path != "" {
			if f, err := os.Create(path); err == nil {
				w = io.MultiWriter(logs.sink, f)
			}
		}
		ctrl.SetLogger(zap.New(zap.WriteTo(w), zap.UseDevMode(false)))
	})
	return logs.sink
}
