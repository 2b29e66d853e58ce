# Sourced by the experiments' scripts (bash): helpers for writing results.

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
