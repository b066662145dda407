package contract

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kyma-project/kim/core/ports"
)

// Checks shared by the contracts of the two kubeconfig Secret stores (KubeconfigSecretStore, IdentityKubeconfigStore).

// metadataReader is the ReadMetadata of either store.
type metadataReader func(ctx context.Context, ref ports.SecretRef, mode ports.ReadMode) (ports.KubeconfigSecretMetadata, error)

// guard is what a caller of Write must pass: a create when the Secret does not exist, otherwise the version read.
func guard(t *testing.T, read metadataReader, ref ports.SecretRef) (expectAbsent bool, pre ports.Precondition, err error) {
	t.Helper()
	md, err := read(t.Context(), ref, ports.ReadLive)
	switch {
	case errors.Is(err, ports.ErrSecretNotFound):
		return true, ports.Precondition{}, nil
	case err != nil:
		return false, ports.Precondition{}, err
	}
	return false, ports.Precondition{UID: md.UID, ResourceVersion: md.ResourceVersion}, nil
}

// readWhileWriting calls write(1..n) while a reader reads r's key without pause, and fails when a read sees the
// key missing, empty or not written by write (every write stores "kc-<i>").
func readWhileWriting(t *testing.T, read KeyReader, r ports.SecretRef, n int, write func(i int) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var reads, bad atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			data, found, err := read(ctx, r)
			if ctx.Err() != nil {
				return
			}
			reads.Add(1)
			if err != nil || !found || len(data) == 0 || !bytes.HasPrefix(data, []byte("kc-")) {
				bad.Add(1)
			}
		}
	})
	for i := 1; i <= n; i++ {
		if err := write(i); err != nil {
			t.Errorf("Write #%d: %v", i, err)
		}
	}
	cancel()
	wg.Wait()
	if bad.Load() != 0 {
		t.Errorf("%d of %d concurrent reads saw a missing, empty or foreign kubeconfig", bad.Load(), reads.Load())
	}
}

// KeyReader reads the data of a Secret's key as a consumer would; found is false when the Secret does not exist.
type KeyReader func(ctx context.Context, ref ports.SecretRef) (data []byte, found bool, err error)

func mustKey(t *testing.T, read KeyReader, r ports.SecretRef, want []byte) {
	t.Helper()
	got, found, err := read(t.Context(), r)
	if err != nil || !found || !bytes.Equal(got, want) {
		t.Errorf("key %s = %q (found %v, err %v), want %q", r, got, found, err, want)
	}
}
