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

# keep RUN REC FILE...: copy the FILEs of the run directory RUN into its
# record REC (a directory committed with the tables, so that they outlive
# the runs directory), each through a temporary file.
keep() {
	mkdir -p "$2"
	local f
	for f in "${@:3}"; do
		cp "$1/$f" "$2/.$f.tmp" && mv "$2/.$f.tmp" "$2/$f"
	done
}

# of_sampler DIR META: true when DIR/config.json (a sample run's or its
# record's) names the SHA-256 of the trained sampler META, the file it ran.
of_sampler() {
	[ -f "$1/config.json" ] && grep -q "$(sha256sum <"$2" | cut -c1-64)" "$1/config.json"
}

# set_aside DIR: move the run directory DIR to DIR.before-DATE, out of the
# way of a run that must not resume it (one of another sampler or protocol).
set_aside() {
	mv "$1" "$1.before-$(date +%Y%m%d-%H%M%S)"
}

# recorded_trainings RECS: the training seeds with a record train-SEED in
# RECS, in increasing order.
recorded_trainings() {
	ls "$1" 2>/dev/null | sed -n 's/^train-\([0-9]*\)$/\1/p' | sort -n
}

# in_parallel JOBS FUNCTION: run the exported FUNCTION once for each line
# of standard input, the line's words its arguments, JOBS at once (as
# xargs -P). Give it its input by redirection, not at the end of a pipe
# (in_parallel 2 train < <(printf '%s\n' $seeds)): the script then waits
# in its own shell, where a SIGTERM to it is acted on at once. That signal
# stops the runs and then the script: every process it started (xargs, so
# that no run starts after them, and the runs: train and sample write
# their checkpoint on it and stop) gets SIGTERM, and the script waits for
# them and exits 143; run again, it continues where they stopped. (Ctrl-C
# in a terminal reaches every run itself; a second signal would end a run
# without its checkpoint, so SIGINT is left alone.)
in_parallel() {
	trap _stop_runs TERM
	xargs -P "$1" -L1 bash -c "$2"' "$@"' "$2" <&0 &
	wait $!
}
_stop_runs() {
	trap - TERM
	local x pids
	x=$(pgrep -P $$ -x xargs || true)
	[ -z "$x" ] || kill -STOP $x # no run starts while the runs are listed
	pids=$(_descendants $$)
	[ -z "$pids" ] || kill -TERM $pids 2>/dev/null || true
	[ -z "$x" ] || kill -CONT $x 2>/dev/null || true
	wait
	exit 143
}
_descendants() { # PID: its descendants, each before its own
	local c
	for c in $(pgrep -P "$1"); do
		[ "$c" = "$BASHPID" ] && continue
		echo "$c"
		_descendants "$c"
	done
}
