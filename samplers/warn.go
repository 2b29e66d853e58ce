package samplers

import (
	"log"
	"sort"
	"sync"
)

// Warn is where a kernel says, once, that it runs outside what it was made
// for (a diffusion below the gradient noise, a learned sampler's inputs
// far from its training): the standard logger when nil.
type Warn func(msg string)

// Once returns a filter that passes each warning to w, or to the standard
// logger if w is nil, the first time its key comes.
func (w Warn) Once() *Once { return &Once{w: w, said: map[string]bool{}} }

// Once passes each warning to its Warn the first time its key comes, and
// drops the later ones. The keys said are part of a run's state: a run
// stopped and resumed restores them (Restore), and does not warn again of
// what it warned of before it stopped. It is safe for concurrent use.
type Once struct {
	w    Warn
	mu   sync.Mutex
	said map[string]bool
}

// Say passes msg on unless a warning with key was passed on before.
func (o *Once) Say(key, msg string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.said[key] {
		return
	}
	o.said[key] = true
	if o.w != nil {
		o.w(msg)
		return
	}
	log.Print(msg)
}

// Said reports whether a warning with key was passed on (or restored).
func (o *Once) Said(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.said[key]
}

// Keys returns the keys said, sorted.
func (o *Once) Keys() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	keys := make([]string, 0, len(o.said))
	for k := range o.said {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Restore marks keys as said, as in the run a resumed one continues.
func (o *Once) Restore(keys []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, k := range keys {
		o.said[k] = true
	}
}

// WarnsOnce is a kernel that warns of each thing once: a run saves its
// Warned keys with its state and restores them when resumed.
type WarnsOnce interface {
	Warned() *Once
}
