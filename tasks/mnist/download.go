package mnist

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/metasgmcmc/metasgmcmc/internal/filehash"
	"github.com/schollz/progressbar/v3"
)

// remoteFile is a file to download and its expected sha256 digest (hex).
type remoteFile struct {
	name, sha256 string
}

// mnistFiles are the four standard files with the digests of the originals.
var mnistFiles = []remoteFile{
	{TrainImagesFile, "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"},
	{TrainLabelsFile, "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"},
	{TestImagesFile, "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"},
	{TestLabelsFile, "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"},
}

// maxDownload bounds the size of one downloaded file (the largest is 9.9 MB).
const maxDownload = 64 << 20

// Download fetches the four MNIST files from baseURL (DefaultBaseURL when
// empty) into dir/mnist, creating it if needed. Each file is checked against
// its known sha256 digest and written atomically (a temporary file renamed
// into place), so a failed or interrupted download never leaves a partial
// file under the final name; a digest mismatch leaves no file and returns an
// error naming the file and both digests. Files already present with the
// right digest are not fetched again. When progress is not nil, a progress
// bar and a line per file are written to it.
func Download(ctx context.Context, dir string, baseURL string, progress io.Writer) error {
	return download(ctx, dir, baseURL, progress, mnistFiles)
}

func download(ctx context.Context, dir, baseURL string, progress io.Writer, files []remoteFile) error {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	baseURL = strings.TrimSuffix(baseURL, "/") + "/"
	dst := filepath.Join(dir, Subdir)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("mnist: download: %w", err)
	}
	for _, f := range files {
		path := filepath.Join(dst, f.name)
		switch sum, err := filehash.SHA256(path); {
		case err == nil && sum == f.sha256:
			if progress != nil {
				fmt.Fprintf(progress, "%s: already present, sha256 verified\n", path)
			}
			continue
		case err == nil:
			if progress != nil {
				fmt.Fprintf(progress, "%s: present but its sha256 is %s, want %s; downloading it again\n", path, sum, f.sha256)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("mnist: download: %w", err)
		}
		if err := fetch(ctx, baseURL+f.name, path, f.sha256, progress); err != nil {
			return err
		}
	}
	return nil
}

// fetch downloads url into path through a temporary file in the same
// directory, renamed into place only once the digest matches want.
func fetch(ctx context.Context, url, path, want string, progress io.Writer) (err error) {
	name := filepath.Base(path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("mnist: download %s: %w", name, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("mnist: download %s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("mnist: download %s: %s: HTTP %s", name, url, resp.Status)
	}
	if resp.ContentLength > maxDownload {
		return fmt.Errorf("mnist: download %s: %s: %d bytes, more than the %d expected at most", name, url, resp.ContentLength, maxDownload)
	}

	tmp, err := os.CreateTemp(filepath.Dir(path), "."+name+".*.part")
	if err != nil {
		return fmt.Errorf("mnist: download %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()

	h := sha256.New()
	w := io.MultiWriter(tmp, h)
	var bar *progressbar.ProgressBar
	if progress != nil {
		bar = progressbar.NewOptions64(resp.ContentLength, // -1 when unknown: a spinner
			progressbar.OptionSetWriter(progress),
			progressbar.OptionSetDescription(name),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
		)
		w = io.MultiWriter(tmp, h, bar)
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, maxDownload+1))
	if bar != nil {
		if err == nil {
			bar.Finish()
		}
		fmt.Fprintln(progress)
	}
	if err != nil {
		return fmt.Errorf("mnist: download %s: %w", name, err)
	}
	if n > maxDownload {
		return fmt.Errorf("mnist: download %s: %s: more than the %d bytes expected at most", name, url, maxDownload)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("mnist: download %s: sha256 mismatch: expected %s, got %s (%d bytes from %s); nothing was written", name, want, got, n, url)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("mnist: download %s: %w", name, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("mnist: download %s: %w", name, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("mnist: download %s: %w", name, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("mnist: download %s: %w", name, err)
	}
	if progress != nil {
		fmt.Fprintf(progress, "%s: downloaded, sha256 verified\n", path)
	}
	return nil
}
