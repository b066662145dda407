package main

import (
	"io"

	"github.com/go-logr/logr"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// newLogger builds the process logger from the --zap-* flags (JSON by default), with the fields of WithValues
// encoded only when a message is written (lazyFields).
func newLogger(s *settings, w io.Writer) logr.Logger {
	return zap.New(zap.UseFlagOptions(&s.zap), zap.WriteTo(w),
		zap.RawZapOpts(uberzap.WrapCore(func(c zapcore.Core) zapcore.Core { return lazyFields{c} })))
}

// lazyFields is a core whose With defers encoding the fields until an enabled entry is checked. Every reconcile
// gives its logger keys (controller-runtime's controller, name and reconcile ID; the Runtime controller's runtime ID
// and shoot name), and zap's JSON encoder encodes them into a new buffer at once: on every Gardener report of a shoot,
// for a pass that logs nothing at the default level (docs/operations/scale.md, "Work per event"). Entries written
// are the same.
type lazyFields struct{ zapcore.Core }

// With implements zapcore.Core.
func (c lazyFields) With(fields []zapcore.Field) zapcore.Core {
	return lazyFields{zapcore.NewLazyWith(c.Core, fields)}
}
