package cli

import "runtime/debug"

// Version describes the code a command was built from, for its outputs:
// the Go version, the module version, and the VCS revision and whether the
// working tree had changes when the build stamped them. go build stamps them
// in a git checkout unless -buildvcs=false is in force (GOFLAGS may set it;
// the experiment scripts pass -buildvcs=true); go run never does.
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
