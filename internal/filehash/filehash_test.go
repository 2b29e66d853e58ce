package filehash

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSHA256 checks the hash of a known content and the error of a missing
// file.
func TestSHA256(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, []byte("abc"), 0o644)
	got, err := SHA256(path)
	if want := "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; err != nil || got != want {
		t.Errorf("SHA256(abc) = %q, %v; want %q", got, err, want)
	}
	if _, err := SHA256(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing file hashed")
	}
}
