package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDumpsOneUnroll dumps a 3-step unroll of the toy's training set-up
// and checks the files' sizes and that the meta-gradient is not zero.
func TestDumpsOneUnroll(t *testing.T) {
	dir := t.TempDir()
	if err := run(context.Background(), []string{"--task", "gaussian10", "--steps", "3", "--seed", "2", "--out", dir}); err != nil {
		t.Fatal(err)
	}
	var u struct {
		Steps, Chains, Dim int
		Grad               [][]float64
	}
	raw, err := os.ReadFile(filepath.Join(dir, "unroll.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &u); err != nil {
		t.Fatal(err)
	}
	if u.Steps != 3 || u.Dim != 10 || u.Chains < 2 {
		t.Fatalf("unroll.json: %d steps, %d chains of dimension %d", u.Steps, u.Chains, u.Dim)
	}
	for name, rows := range map[string]int{"theta0.f64": 1, "theta.f64": 3, "noise.f64": 3} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(8 * rows * u.Chains * u.Dim); fi.Size() != want {
			t.Errorf("%s: %d bytes, want %d", name, fi.Size(), want)
		}
	}
	norm := 0.0
	for _, g := range u.Grad {
		for _, v := range g {
			norm += v * v
		}
	}
	if len(u.Grad) == 0 || norm == 0 {
		t.Errorf("the meta-gradient is empty or zero: %v", u.Grad)
	}
}

func TestRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "gaussian10"}, "--out"},
		{[]string{"--task", "gaussian10", "--steps", "0", "--out", "x"}, "--steps"},
		{[]string{"--task", "mnist-nt", "--out", "x"}, "no meta-training set-up"},
	} {
		err := run(context.Background(), tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.want)
		}
	}
}
