package samplers_test

import (
	"bytes"
	"context"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// quickStart returns the Go program of the README's section on sampling
// one's own model: its first ```go block.
func quickStart(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "## Use it on your own model")
	if i < 0 {
		t.Fatal(`the README has no section "Use it on your own model"`)
	}
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(s[i:])
	if m == nil {
		t.Fatal("the README's own-model section has no ```go block")
	}
	return m[1]
}

// TestQuickStartInItsOwnModule builds the README's own-model program as a
// user would, in a module of its own with a replace directive to this
// checkout: it is one complete package main, formatted, whose code outside
// the model's maths is fewer than 40 lines; it links no Gorgonia package
// (go list -deps); and it runs on the committed toy sampler in under a
// minute, printing the summaries of SGHMC and NNSGHMC.
func TestQuickStartInItsOwnModule(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs a program in a module of its own")
	}
	prog := quickStart(t)
	if got, err := formatted(prog); err != nil || got != prog {
		t.Errorf("the program is not gofmt-formatted (%v)", err)
	}
	if n := codeLines(prog); n >= 40 {
		t.Errorf("%d lines of code besides the model's maths, want fewer than 40", n)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mod := "module example\n\ngo 1.26\n\nrequire github.com/metasgmcmc/metasgmcmc v0.0.0\n\nreplace github.com/metasgmcmc/metasgmcmc => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"go.mod": mod, "go.sum": string(sum), "main.go": prog} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gocmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	gocmd("build", "-o", "quickstart", ".")
	if deps := gocmd("list", "-deps", "."); strings.Contains(strings.ToLower(deps), "gorgonia") {
		t.Errorf("the program links Gorgonia:\n%s", deps)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, filepath.Join(dir, "quickstart"), filepath.Join(root, "experiments", "gaussian", "sampler.json"))
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("running it: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"*samplers.SGHMC, η = ", "*nnsghmc.NNSGHMC, η = ", "ess_bulk", "r_hat", "\nw2 "} {
		if !strings.Contains(out, want) {
			t.Errorf("its output lacks %q:\n%s", want, out)
		}
	}
}

// formatted returns prog as gofmt formats it.
func formatted(prog string) (string, error) {
	out, err := format.Source([]byte(prog))
	return string(out), err
}

// codeLines counts the lines of prog outside the model's maths (from
// "// The model's maths" to "// The sampling") that are neither blank nor
// comments.
func codeLines(prog string) int {
	n, model := 0, false
	for _, line := range strings.Split(prog, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(l, "// The model's maths"):
			model = true
		case strings.HasPrefix(l, "// The sampling"):
			model = false
		case model || l == "" || strings.HasPrefix(l, "//"):
		default:
			n++
		}
	}
	return n
}
