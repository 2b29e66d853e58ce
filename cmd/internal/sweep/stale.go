package sweep

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/metasgmcmc/metasgmcmc/internal/filehash"
)

// unscored are the flags that leave a run's numbers alone: where it
// writes, how it reports, where the data are.
var unscored = map[string]bool{"out": true, "resume": true, "force": true, "quiet": true, "flagfile": true, "data-dir": true, "download": true}

// staleness compares the flags that the ended run in dir ran with (its
// summary's "flags") with those that args set now (Flags: a flag file may
// have changed since), and the content of its input files (the summary's
// "inputs", as the sampler file of --meta) with theirs now, and describes
// the differences, as "lr ran 0.0013, now 1.3e-2"; "" where they agree, or
// where the summary does not record its flags or args cannot be read (the
// run's command reports that).
func staleness(dir string, args []string) string {
	b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		return ""
	}
	var sum struct {
		Flags  map[string]string `json:"flags"`
		Inputs map[string]struct {
			SHA256 string `json:"sha256"`
		} `json:"inputs"`
	}
	if json.Unmarshal(b, &sum) != nil || sum.Flags == nil {
		return ""
	}
	args, err = Expand(args, os.LookupEnv)
	if err != nil {
		return ""
	}
	now, err := Flags(args)
	if err != nil {
		return ""
	}
	var diffs []string
	for name, v := range now {
		if unscored[name] {
			continue
		}
		ran, ok := sum.Flags[name]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s unset, now %s", name, v))
		} else if !sameValue(ran, v) {
			diffs = append(diffs, fmt.Sprintf("%s ran %s, now %s", name, ran, v))
		}
	}
	for name, in := range sum.Inputs {
		path, ok := now[name]
		if !ok || !sameValue(sum.Flags[name], path) {
			continue // a flag that differs, named above
		}
		if h, err := filehash.SHA256(path); err == nil && h != in.SHA256 {
			diffs = append(diffs, fmt.Sprintf("%s %s changed since the run (SHA-256 %.8s…, now %.8s…)", name, path, in.SHA256, h))
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

// sameValue reports whether a flag's value as a run recorded it (ran,
// pflag's form) is the value as a flag file or command line writes it
// (now): the same text, number, truth value or list, or the same file,
// which a run records by its absolute path (in whichever clone of the
// repository it ran) and a flag file names relative to the root.
func sameValue(ran, now string) bool {
	if ran == now {
		return true
	}
	if filepath.IsAbs(ran) && !filepath.IsAbs(now) && now != "" {
		if abs, err := filepath.Abs(now); err == nil && abs == ran {
			return true
		}
		return strings.HasSuffix(filepath.ToSlash(ran), "/"+filepath.ToSlash(filepath.Clean(now)))
	}
	if a, err := strconv.ParseFloat(ran, 64); err == nil {
		b, err := strconv.ParseFloat(now, 64)
		return err == nil && a == b
	}
	if a, err := strconv.ParseBool(ran); err == nil {
		b, err := strconv.ParseBool(now)
		return err == nil && a == b
	}
	if strings.HasPrefix(ran, "[") && strings.HasSuffix(ran, "]") {
		list := func(s string) []string {
			return strings.FieldsFunc(strings.Trim(s, "[]"), func(r rune) bool { return r == ',' || r == ' ' })
		}
		a, b := list(ran), list(now)
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameValue(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return false
}
