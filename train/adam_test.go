package train

import (
	"math"
	"testing"
)

func TestAdamConfigValidate(t *testing.T) {
	good := AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	tests := []struct {
		name   string
		change func(c *AdamConfig)
		ok     bool
	}{
		{"good", func(*AdamConfig) {}, true},
		{"zero beta1", func(c *AdamConfig) { c.Beta1 = 0 }, true},
		{"zero lr", func(c *AdamConfig) { c.LR = 0 }, false},
		{"negative lr", func(c *AdamConfig) { c.LR = -1 }, false},
		{"NaN lr", func(c *AdamConfig) { c.LR = math.NaN() }, false},
		{"infinite lr", func(c *AdamConfig) { c.LR = math.Inf(1) }, false},
		{"beta1 of 1", func(c *AdamConfig) { c.Beta1 = 1 }, false},
		{"negative beta2", func(c *AdamConfig) { c.Beta2 = -0.1 }, false},
		{"zero eps", func(c *AdamConfig) { c.Eps = 0 }, false},
		{"infinite eps", func(c *AdamConfig) { c.Eps = math.Inf(1) }, false},
	}
	for _, tc := range tests {
		c := good
		tc.change(&c)
		if err := c.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: %+v: got %v, want ok %v", tc.name, c, err, tc.ok)
		}
	}
}
