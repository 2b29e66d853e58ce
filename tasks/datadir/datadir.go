// Package datadir finds the data sets the tasks read: the directory comes
// from a --data-dir flag, else the environment variable METASGMCMC_DATA,
// else ./data.
package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// EnvVar names the environment variable holding the data directory.
const EnvVar = "METASGMCMC_DATA"

// Dir returns the data directory: flag if not empty, else $METASGMCMC_DATA,
// else "data".
func Dir(flag string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv(EnvVar); env != "" {
		return env
	}
	return "data"
}

// MissingError reports a data file that is not where it was looked for.
type MissingError struct {
	File, Dir, Source string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("data file %s not found in %s (the data directory comes from --data-dir, else $%s, else ./data); obtain it from %s",
		e.File, e.Dir, EnvVar, e.Source)
}

// Path returns dir/name if that file exists, and a *MissingError naming the
// file, the directory searched and source (where the file can be obtained)
// if it does not.
func Path(dir, name, source string) (string, error) {
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", &MissingError{File: name, Dir: dir, Source: source}
		}
		return "", fmt.Errorf("data file %s: %w", p, err)
	}
	return p, nil
}
