package gardenbox

import (
	"io"
	"os"
	"sync"
)

// stderrMu serialises the stderr swap below.
var stderrMu sync.Mutex

// captureStderr runs start while os.Stderr points to a pipe drained into out (io.Discard when nil).
//
// Why: the in-process gardener-apiserver builds its own zap logger on os.Stderr and installs it as the klog
// logger; its start-up is noisy ("Timeout or abort while handling" discovery errors) and harmless. A zap
// logger keeps the *os.File it was built with, so swapping os.Stderr only while the garden starts silences
// it for its whole lifetime without touching anyone else's output afterwards. The returned closer ends
// the drain (call it after the gardener-apiserver stopped).
func captureStderr(out io.Writer, start func() error) (io.Closer, error) {
	if out == nil {
		out = io.Discard
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	go func() { _, _ = io.Copy(out, r) }()
	stderrMu.Lock()
	orig := os.Stderr
	os.Stderr = w
	startErr := start()
	os.Stderr = orig
	stderrMu.Unlock()
	return pipeCloser{r: r, w: w}, startErr
}

type pipeCloser struct{ r, w *os.File }

func (p pipeCloser) Close() error {
	_ = p.w.Close()
	return p.r.Close()
}
