package kube

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
)

// errResponseBudget: the response bodies of one operation exceeded its budget; the body was not read further.
var errResponseBudget = errors.New("responses exceed the bytes allowed for this operation")

// responseBudget bounds the bytes of response bodies read from a runtime's API server within one operation (all
// pages of a list). client-go reads a whole body into memory before decoding it, so the bound must hold while the
// body is read, not after the objects are decoded: budgetTransport enforces it on the wire.
type responseBudget struct {
	max  int64
	used atomic.Int64
	// seen is set when budgetTransport counted a response: a client made without it (a test's fake, another
	// factory) counts nothing, and the caller then counts the decoded objects itself (add).
	seen atomic.Bool
}

type budgetKey struct{}

// withResponseBudget returns ctx whose requests budgetTransport counts against b.
func withResponseBudget(ctx context.Context, b *responseBudget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// counted tells whether the transport counted any response of this budget.
func (b *responseBudget) counted() bool { return b.seen.Load() }

// add counts n bytes (for a client whose responses the transport did not see).
func (b *responseBudget) add(n int64) { b.used.Add(n) }

// exceeded tells whether more than max bytes were counted.
func (b *responseBudget) exceeded() bool { return b.used.Load() > b.max }

// MaxRuntimeResponseBytes bounds every response body read from a runtime's API server whose request carries no
// budget of its own (withResponseBudget): discovery documents, Secrets, bindings, the lists the operator reads. The
// customer is admin of the runtime and controls how large these are (thousands of CRDs, an API service of their
// own); one operator reads every runtime of the landscape. The kube-apiserver stores objects up to about 1.5 MiB
// (etcd's request limit) and a large cluster's aggregated discovery is a few MiB, so 8 MiB refuses nothing real.
const MaxRuntimeResponseBytes int64 = 8 << 20

// budgetTransport counts the response bodies of requests against a budget and fails the read once it is exceeded
// (errResponseBudget: an error, never truncated data). A request whose context carries a responseBudget is
// counted against it (all responses of one operation together); every other request against a budget of its own
// of perResponse bytes. It wraps client-go's transport, below Go's transparent decompression, so it counts bytes as
// decoded (a compressed bomb is no way around it).
type budgetTransport struct {
	next        http.RoundTripper
	perResponse int64
}

// withResponseBudgets is the rest.Config transport wrapper (rest.Config.Wrap) of every client of a runtime
// (RESTConfigFromRuntimeKubeconfig), with MaxRuntimeResponseBytes per response.
func withResponseBudgets(next http.RoundTripper) http.RoundTripper {
	return budgetTransport{next: next, perResponse: MaxRuntimeResponseBytes}
}

// WrappedRoundTripper exposes the transport below to client-go's transport utilities (net.RoundTripperWrapper):
// CloseIdleConnectionsFor reaches the connection pool through it when a runtime client goes.
func (t budgetTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// RoundTrip implements http.RoundTripper.
func (t budgetTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	b, _ := req.Context().Value(budgetKey{}).(*responseBudget)
	if b == nil {
		b = &responseBudget{max: t.perResponse}
	}
	b.seen.Store(true)
	if resp.ContentLength > 0 && b.used.Load()+resp.ContentLength > b.max {
		// Announced as too large: not a byte of it is read.
		_ = resp.Body.Close()
		b.used.Add(resp.ContentLength)
		return nil, errResponseBudget
	}
	resp.Body = &budgetBody{body: resp.Body, b: b}
	return resp, nil
}

// budgetBody reads at most what is left of the budget plus one byte (to tell "exactly the budget" from "more").
type budgetBody struct {
	body io.ReadCloser
	b    *responseBudget
}

func (r *budgetBody) Read(p []byte) (int, error) {
	left := r.b.max - r.b.used.Load()
	if left < 0 {
		return 0, errResponseBudget
	}
	if int64(len(p)) > left+1 {
		p = p[:left+1]
	}
	n, err := r.body.Read(p)
	if r.b.used.Add(int64(n)) > r.b.max {
		return 0, errResponseBudget
	}
	return n, err
}

func (r *budgetBody) Close() error { return r.body.Close() }
