package registrycachesync

import (
	"container/list"
	"sync"

	"golang.org/x/time/rate"
)

// KeyedLimiter is a token bucket per key (a source of events) for at most Max keys: past that the key used least
// recently is forgotten (it starts again with a full bucket), so callers that make up keys cost bounded memory.
type KeyedLimiter struct {
	limit rate.Limit
	burst int
	max   int

	mu    sync.Mutex
	order *list.List // of *keyedBucket, most recently used first
	byKey map[string]*list.Element
}

type keyedBucket struct {
	key string
	lim *rate.Limiter
}

// NewKeyedLimiter allows each key limit events a second with burst, remembering at most maxKeys keys (at least 1).
func NewKeyedLimiter(limit rate.Limit, burst, maxKeys int) *KeyedLimiter {
	return &KeyedLimiter{limit: limit, burst: burst, max: max(maxKeys, 1), order: list.New(), byKey: map[string]*list.Element{}}
}

// Allow spends one token of key's bucket; false when it has none.
func (k *KeyedLimiter) Allow(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e, ok := k.byKey[key]; ok {
		k.order.MoveToFront(e)
		return e.Value.(*keyedBucket).lim.Allow()
	}
	if k.order.Len() >= k.max {
		oldest := k.order.Back()
		k.order.Remove(oldest)
		delete(k.byKey, oldest.Value.(*keyedBucket).key)
	}
	b := &keyedBucket{key: key, lim: rate.NewLimiter(k.limit, k.burst)}
	k.byKey[key] = k.order.PushFront(b)
	return b.lim.Allow()
}

// Len is the number of keys remembered.
func (k *KeyedLimiter) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.order.Len()
}
