package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/metasgmcmc/metasgmcmc/internal/filehash"
	"github.com/spf13/pflag"
)

// ConfigFile is the file in a run's directory that records its flags:
// {"command": the command, "flags": the resolved flags (Resolved), "given":
// the names of those set (RunFlags.Given), "inputs": the input files
// (RunFlags.Inputs), …}, from which --resume DIR takes them.
const ConfigFile = "config.json"

// RunFlags says how a command continues a run with the flags its
// ConfigFile recorded, so that --resume DIR alone continues the run as it
// was.
type RunFlags struct {
	// Free are the flags a resumed run may set otherwise than the run
	// (what extends it, and what does not change its result).
	Free map[string]bool
	// Own are the flags never taken from the run (--resume, --out, …).
	Own map[string]bool
	// Change says, in the message refusing a conflicting flag, what may
	// change, such as "only --steps may change, to extend it".
	Change string
	// Legacy, when not nil, names the flags that a ConfigFile without
	// "given" (written before it was recorded) set; when nil such a file
	// is refused as damaged.
	Legacy func(fs *pflag.FlagSet, flags map[string]string) map[string]bool
	// Damaged says what to do about a damaged ConfigFile.
	Damaged string
	// Files are the flags that name input files (a trained sampler, a
	// covariance): ConfigFile records each one's absolute path and content
	// hash (Inputs), and a resumed run reads the same path and refuses a
	// file whose content has changed.
	Files []string
}

// Input is an input file of a run, as ConfigFile records it under
// "inputs", keyed by its flag.
type Input struct {
	Path   string `json:"path"`   // absolute
	SHA256 string `json:"sha256"` // of the content, in hex
}

// Absolute sets each flag of r.Files that fs sets to a path to its
// absolute form, so that the run's records (ConfigFile, its summary) name
// the very file it read, wherever it is resumed from.
func (r RunFlags) Absolute(fs *pflag.FlagSet) error {
	for _, name := range r.Files {
		f := fs.Lookup(name)
		if f == nil || f.Value.String() == "" || filepath.IsAbs(f.Value.String()) {
			continue
		}
		abs, err := filepath.Abs(f.Value.String())
		if err == nil {
			err = fs.Set(name, abs)
		}
		if err != nil {
			return Usagef("--%s %s: %v", name, f.Value, err)
		}
	}
	return nil
}

// Inputs returns the input files that the flags in r.Files name on fs
// (those set to a non-empty path), with their absolute paths and content
// hashes, for ConfigFile's "inputs".
func (r RunFlags) Inputs(fs *pflag.FlagSet) (map[string]Input, error) {
	in := map[string]Input{}
	for _, name := range r.Files {
		f := fs.Lookup(name)
		if f == nil || f.Value.String() == "" {
			continue
		}
		abs, err := filepath.Abs(f.Value.String())
		if err != nil {
			return nil, Usagef("--%s %s: %v", name, f.Value, err)
		}
		sum, err := filehash.SHA256(abs)
		if err != nil {
			return nil, Usagef("--%s: %v", name, err)
		}
		in[name] = Input{Path: abs, SHA256: sum}
	}
	return in, nil
}

// applyInput sets the file flag name on fs to the run's input file in,
// unless this command line names the same file, and checks that its
// content is the run's: a run resumes with the very inputs it started
// with, wherever it is resumed from.
func (r RunFlags) applyInput(fs *pflag.FlagSet, dir, path, name string, in Input) error {
	if fs.Changed(name) {
		now := fs.Lookup(name).Value.String()
		if abs, err := filepath.Abs(now); err != nil || abs != in.Path {
			return Usagef("--%s %s conflicts with the run in %s, which started with --%s %s (%s): drop --%s to continue the run as it was, or start a new run into another --out",
				name, now, dir, name, in.Path, path, name)
		}
	}
	if err := fs.Set(name, in.Path); err != nil {
		return Usagef("cannot resume %s: %s: --%s %s: %v; %s", dir, path, name, in.Path, err, r.Damaged)
	}
	sum, err := filehash.SHA256(in.Path)
	switch {
	case err != nil:
		return Usagef("cannot resume %s: it started with --%s %s, which cannot be read now (%v): put that file back, or start a new run into another --out", dir, name, in.Path, pathErr(err))
	case sum != in.SHA256:
		return Usagef("cannot resume %s: --%s %s has changed since the run started (sha256 %.12s…, was %.12s…): put back the file it started with, or start a new run into another --out", dir, name, in.Path, sum, in.SHA256)
	}
	return nil
}

// Apply sets on fs the flags of the run in dir that this command line does
// not set. A flag set here to another value than the run's is a usage error
// naming it, but for those in Free. The flags in Own are not taken, but
// for the record of the flag files the run started with: --flagfile keeps
// the run's value unless given here (the files are not read again; the run's
// flags hold what they set), so a resumed run records what a run never
// stopped records.
func (r RunFlags) Apply(fs *pflag.FlagSet, dir string) error {
	path := filepath.Join(dir, ConfigFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return Usagef("cannot resume %s: %v; the run's %s holds its flags: restore it, or start afresh into another --out", dir, err, ConfigFile)
	}
	var saved struct {
		Flags  map[string]string `json:"flags"`
		Given  []string          `json:"given"`
		Inputs map[string]Input  `json:"inputs"`
	}
	if err := json.Unmarshal(b, &saved); err != nil || saved.Flags == nil || (saved.Given == nil && r.Legacy == nil) {
		switch {
		case err != nil:
		case saved.Flags == nil:
			err = errors.New(`no "flags"`)
		default:
			err = errors.New(`no "given"`)
		}
		return Usagef("cannot resume %s: %s is not valid (%v); %s", dir, path, err, r.Damaged)
	}
	set := map[string]bool{}
	for _, name := range saved.Given {
		set[name] = true
	}
	if saved.Given == nil {
		set = r.Legacy(fs, saved.Flags)
	}
	change := ""
	if r.Change != "" {
		change = " (" + r.Change + ")"
	}
	names := make([]string, 0, len(saved.Flags))
	for name := range saved.Flags {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := saved.Flags[name]
		f := fs.Lookup(name)
		if f == nil || r.Own[name] {
			if name == FlagFileFlag && f != nil && v != "" && !fs.Changed(name) {
				if err := fs.Set(name, v); err != nil {
					return err
				}
			}
			continue
		}
		if in, ok := saved.Inputs[name]; ok && set[name] {
			if err := r.applyInput(fs, dir, path, name, in); err != nil {
				return err
			}
			continue
		}
		if fs.Changed(name) {
			if now := f.Value.String(); now != v && !r.Free[name] {
				had := fmt.Sprintf("has --%s %s", name, v)
				if !set[name] && v == f.DefValue {
					had = fmt.Sprintf("did not set --%s", name)
				}
				return Usagef("--%s %s conflicts with the run in %s, which %s (%s): drop --%s to continue the run as it was%s, or start a new run into another --out",
					name, now, dir, had, path, name, change)
			}
			continue
		}
		if set[name] {
			if err := fs.Set(name, v); err != nil {
				return Usagef("cannot resume %s: %s: --%s %s: %v; %s", dir, path, name, v, err, r.Damaged)
			}
		}
	}
	return nil
}

// Given returns the names of the flags set on the command line or in a
// flag file (or, on --resume, taken from the run), in order, but those in
// Own other than --out.
func (r RunFlags) Given(fs *pflag.FlagSet) []string {
	names := []string{}
	fs.Visit(func(f *pflag.Flag) {
		if !r.Own[f.Name] || f.Name == "out" {
			names = append(names, f.Name)
		}
	})
	return names
}
