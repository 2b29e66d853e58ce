package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProgressDisabled(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		name string
		p    *Progress
	}{
		{"nil", nil},
		{"zero", &Progress{}},
		{"quiet", NewProgress(10, "x", true, os.Stderr)},
		{"not a terminal", NewProgress(10, "x", false, f)},
		{"nil file", NewProgress(10, "x", false, nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.p != nil && tt.p.bar != nil {
				t.Fatal("progress bar is enabled")
			}
			tt.p.Add(3)
			tt.p.Describe("loss 0.5")
			tt.p.Finish()
			tt.p.Finish()
		})
	}
	if info, err := f.Stat(); err != nil || info.Size() != 0 {
		t.Errorf("disabled progress wrote to its file (size %d, err %v)", info.Size(), err)
	}
}

func TestProgressEnabled(t *testing.T) {
	for _, total := range []int{5, 0} {
		var out strings.Builder
		p := newProgress(total, "sampling", &out)
		for i := 0; i < 5; i++ {
			p.Add(1)
		}
		p.Describe("loss 0.25")
		p.Finish()
		p.Finish()
		got := out.String()
		if !strings.HasSuffix(got, "\n") || strings.Count(got, "\n") != 1 {
			t.Errorf("total %d: output does not end in exactly one newline: %q", total, got)
		}
		if total > 0 && !strings.Contains(got, "(5/5") {
			t.Errorf("total %d: output has no final count: %q", total, got)
		}
	}
}

func TestProgressConcurrent(t *testing.T) {
	var out strings.Builder
	p := newProgress(100, "x", &out)
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 25; i++ {
				p.Add(1)
				p.Describe("loss")
			}
			done <- true
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	p.Finish()
	if got := out.String(); !strings.Contains(got, "(100/100") {
		t.Errorf("output has no final count 100/100: %q", got)
	}
}
