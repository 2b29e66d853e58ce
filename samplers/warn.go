package samplers

import (
	"log"
	"sync"
)

// Warn is where a kernel says, once, that it runs outside what it was made
// for (a diffusion below the gradient noise, a learned sampler's inputs
// far from its training): the standard logger when nil.
type Warn func(msg string)

// Once returns a function that passes each message to w, or to the standard
// logger if w is nil, the first time it is called with that key, and
// ignores later calls with the same key.
func (w Warn) Once() func(key, msg string) {
	var mu sync.Mutex
	said := map[string]bool{}
	return func(key, msg string) {
		mu.Lock()
		defer mu.Unlock()
		if said[key] {
			return
		}
		said[key] = true
		if w != nil {
			w(msg)
			return
		}
		log.Print(msg)
	}
}
