# Sourced by the experiments' scripts (bash): helpers for running
# evaluations and writing their results.

# sample_once SAMPLE OUT ARGS...: run the sample binary SAMPLE with ARGS,
# quietly, into OUT, unless OUT holds a run that ended (OUT/summary.json
# without an interruption); a run interrupted (by a signal, or a machine
# lost) continues from its checkpoint (sample --resume), or starts again
# where it wrote none. A run that fails does not stop the script: its
# summary.json says why, and the tables leave out runs without one.
sample_once() {
	local bin=$1 out=$2
	shift 2
	if [ -f "$out/summary.json" ] && ! grep -q '^  "error": "interrupted' "$out/summary.json"; then
		return 0
	fi
	if [ -f "$out/checkpoint.json" ]; then
		"$bin" --resume "$out" --quiet || true
	else
		"$bin" "$@" --quiet --force --out "$out" || true
	fi
}

# into_readme NAME DIR: copy DIR/NAME.md into DIR/README.md between its
# <!-- NAME.md --> and <!-- /NAME.md --> markers (the README is rewritten
# through a temporary file, never left half-written).
into_readme() {
	awk -v table="$2/$1.md" -v start="<!-- $1.md -->" -v stop="<!-- /$1.md -->" '
		index($0, start) { print; while ((getline line < table) > 0) print line; skip = 1; next }
		index($0, stop) { skip = 0 }
		!skip' "$2/README.md" >"$2/README.md.tmp"
	mv "$2/README.md.tmp" "$2/README.md"
}

# value KEY JSON: a number of a JSON file written one key a line (sample's
# summary.json, a sampler.json's top-level "chosen_epoch"), or "—"
value() {
	awk -v key="\"$1\":" '$1 == key { sub(",", "", $2); print $2; found = 1 } END { if (!found) print "—" }' "$2" 2>/dev/null || echo —
}
