package cli

import "runtime/debug"

// Version describes the code a command was built from, for its outputs:
// the module version, and the VCS revision and whether the working tree had
// changes when go build stamped them (go build does in a git checkout; go
// run does not, and then only the Go version is known).
func Version() map[string]any {
	v := map[string]any{}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v["go"] = info.GoVersion
	if info.Main.Version != "" && info.Main.Version != "(devel)" {
		v["module"] = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v["revision"] = s.Value
		case "vcs.modified":
			v["modified"] = s.Value == "true"
		}
	}
	return v
}
