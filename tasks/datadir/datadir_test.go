package datadir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDirPrecedence(t *testing.T) {
	t.Setenv(EnvVar, "/from/env")
	if got := Dir("/from/flag"); got != "/from/flag" {
		t.Errorf("flag: %q", got)
	}
	if got := Dir(""); got != "/from/env" {
		t.Errorf("env: %q", got)
	}
	t.Setenv(EnvVar, "")
	if got := Dir(""); got != "data" {
		t.Errorf("default: %q", got)
	}
}

func TestPathNamesTheMissingFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "there.bin"), []byte("x"), 0o644)
	if p, err := Path(dir, "there.bin", "anywhere"); err != nil || p != filepath.Join(dir, "there.bin") {
		t.Errorf("existing file: %q, %v", p, err)
	}
	_, err := Path(dir, "gone.bin", "https://example.org/gone.bin")
	var me *MissingError
	if !errors.As(err, &me) {
		t.Fatalf("want a MissingError, got %v", err)
	}
	for _, want := range []string{"gone.bin", dir, EnvVar, "https://example.org/gone.bin"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
