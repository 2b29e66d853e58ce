package mnist

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/metasgmcmc/metasgmcmc/internal/filehash"
)

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// fakeServer serves files under /data/ and counts the requests per name.
type fakeServer struct {
	*httptest.Server
	mu       sync.Mutex
	files    map[string][]byte
	requests map[string]int
}

func newFakeServer(t *testing.T, files map[string][]byte) *fakeServer {
	fs := &fakeServer{files: files, requests: map[string]int{}}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/data/")
		fs.mu.Lock()
		fs.requests[name]++
		data, ok := fs.files[name]
		fs.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	}))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fakeServer) count(name string) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.requests[name]
}

// fakeFiles returns small fake files and the digest table for them.
func fakeFiles() (map[string][]byte, []remoteFile) {
	files := map[string][]byte{}
	var table []remoteFile
	for i, name := range Files {
		data := bytes.Repeat([]byte(name), 1000*(i+1))
		files[name] = data
		table = append(table, remoteFile{name, digest(data)})
	}
	return files, table
}

// checkDir checks that dir/mnist holds exactly want (name → content): no
// other file, in particular no temporary one.
func checkDir(t *testing.T, dir string, want map[string][]byte) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, Subdir))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(want) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files %v, want %d", names, len(want))
	}
	for name, data := range want {
		p := filepath.Join(dir, Subdir, name)
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: %d bytes (%v), want %d", name, len(got), err, len(data))
			continue
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", name, fi.Mode())
		}
	}
}

func TestDownload(t *testing.T) {
	files, table := fakeFiles()
	srv := newFakeServer(t, files)
	dir := t.TempDir()
	var progress bytes.Buffer
	if err := download(context.Background(), dir, srv.URL+"/data", &progress, table); err != nil {
		t.Fatal(err)
	}
	checkDir(t, dir, files)
	for _, name := range Files {
		if srv.count(name) != 1 {
			t.Errorf("%s fetched %d times, want 1", name, srv.count(name))
		}
		if !strings.Contains(progress.String(), name) {
			t.Errorf("progress output does not mention %s:\n%s", name, progress.String())
		}
	}

	// Again: everything is present with the right digest, nothing is fetched.
	progress.Reset()
	if err := download(context.Background(), dir, srv.URL+"/data/", &progress, table); err != nil {
		t.Fatal(err)
	}
	for _, name := range Files {
		if srv.count(name) != 1 {
			t.Errorf("%s fetched again", name)
		}
	}
	if !strings.Contains(progress.String(), "already present") {
		t.Errorf("progress output on the second run: %q", progress.String())
	}

	// A present file with the wrong content is fetched again; no progress
	// writer is fine.
	p := filepath.Join(dir, Subdir, TrainLabelsFile)
	os.WriteFile(p, []byte("stale"), 0o644)
	if err := download(context.Background(), dir, srv.URL+"/data/", nil, table); err != nil {
		t.Fatal(err)
	}
	if srv.count(TrainLabelsFile) != 2 || srv.count(TrainImagesFile) != 1 {
		t.Errorf("requests after one stale file: %v", srv.requests)
	}
	checkDir(t, dir, files)
}

func TestDownloadDigestMismatch(t *testing.T) {
	files, table := fakeFiles()
	srv := newFakeServer(t, files)
	bad := strings.Repeat("0", 64)
	table[2].sha256 = bad // t10k images
	dir := t.TempDir()
	err := download(context.Background(), dir, srv.URL+"/data/", nil, table)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{TestImagesFile, bad, digest(files[TestImagesFile]), "mismatch"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The two files before it are in place; the bad one left nothing.
	checkDir(t, dir, map[string][]byte{TrainImagesFile: files[TrainImagesFile], TrainLabelsFile: files[TrainLabelsFile]})
}

func TestDownloadFailures(t *testing.T) {
	files, table := fakeFiles()
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		ctx     func() context.Context
		want    string
	}{
		{"not found", http.NotFound, nil, "404"},
		{"cut short", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100000")
			w.Write([]byte("only a little"))
		}, nil, "unexpected EOF"},
		{"cancelled", func(w http.ResponseWriter, r *http.Request) { w.Write(files[TrainImagesFile]) },
			func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			}, "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			dir := t.TempDir()
			var progress bytes.Buffer
			err := download(ctx, dir, srv.URL, &progress, table)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), TrainImagesFile) {
				t.Fatalf("error %v, want one naming %s and containing %q", err, TrainImagesFile, tc.want)
			}
			checkDir(t, dir, nil)
		})
	}
}

// TestDownloadRealFiles serves the real files from a local server and
// checks them against the built-in digests, then loads them.
func TestDownloadRealFiles(t *testing.T) {
	src := dataDir(t)
	srv := httptest.NewServer(http.StripPrefix("/mnist/", http.FileServer(http.Dir(filepath.Join(src, Subdir)))))
	defer srv.Close()
	dir := t.TempDir()
	if err := Download(context.Background(), dir, srv.URL+"/mnist/", nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range mnistFiles {
		if got, err := filehash.SHA256(filepath.Join(dir, Subdir, f.name)); err != nil || got != f.sha256 {
			t.Errorf("%s: sha256 %s (%v), want %s", f.name, got, err, f.sha256)
		}
	}
}
