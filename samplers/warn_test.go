package samplers

import (
	"reflect"
	"testing"
)

// TestOncePassesEachKeyOnce: Say passes the first warning of each key on and
// drops the later ones, Keys lists what was said, and a filter restored with
// those keys (a resumed run's) drops them too but passes new keys on.
func TestOncePassesEachKeyOnce(t *testing.T) {
	var got []string
	o := Warn(func(msg string) { got = append(got, msg) }).Once()
	o.Say("b", "b first")
	o.Say("a", "a first")
	o.Say("b", "b again")
	if want := []string{"b first", "a first"}; !reflect.DeepEqual(got, want) {
		t.Errorf("passed on %q, want %q", got, want)
	}
	if keys := o.Keys(); !reflect.DeepEqual(keys, []string{"a", "b"}) || !o.Said("a") || o.Said("c") {
		t.Errorf("keys %q (said a: %v, c: %v), want [a b]", keys, o.Said("a"), o.Said("c"))
	}
	got = nil
	resumed := Warn(func(msg string) { got = append(got, msg) }).Once()
	resumed.Restore(o.Keys())
	resumed.Say("a", "a after resuming")
	resumed.Say("c", "c first")
	if want := []string{"c first"}; !reflect.DeepEqual(got, want) {
		t.Errorf("the resumed filter passed on %q, want %q", got, want)
	}
}
