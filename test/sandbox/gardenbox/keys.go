package gardenbox

import (
	"crypto/rsa"
	"io"
	"sync"

	gardensecrets "github.com/gardener/gardener/pkg/utils/secrets"
)

var poolKeys sync.Once

// PoolGardenerKeys makes the in-process gardener-apiserver take the keys of the client certificates it issues for
// admin kubeconfigs from a pool of size keys per key size, made on first use, instead of generating a 3072-bit RSA
// key per request: in the FIPS module that is about 0.33 s of CPU, which in the kubeconfig controller's
// integration tests was 85 % of the test process's CPU, and in benchmarks would measure Gardener's key generation
// rather than the operator. Every certificate is still issued and signed per request, with the requested expiry,
// by the shoot's own client CA. Gardener exposes the generator for its own tests (secrets.GenerateKey). Call it
// before the garden starts; later calls change nothing.
func PoolGardenerKeys(size int) {
	poolKeys.Do(func() {
		var mu sync.Mutex
		pool := map[int][]*rsa.PrivateKey{}
		next := 0
		generate := gardensecrets.GenerateKey
		gardensecrets.GenerateKey = func(r io.Reader, bits int) (*rsa.PrivateKey, error) {
			mu.Lock()
			defer mu.Unlock()
			if keys := pool[bits]; len(keys) >= size {
				next++
				return keys[next%len(keys)], nil
			}
			k, err := generate(r, bits)
			if err != nil {
				return nil, err
			}
			pool[bits] = append(pool[bits], k)
			return k, nil
		}
	})
}
