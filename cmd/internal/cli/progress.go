package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress reports the progress of a run: on a terminal as a bar with a
// count, rate and estimated time left; elsewhere (a log file, nohup, a batch
// job) as a line at each call of Log, with the count, the time elapsed and
// the estimated time left. A disabled Progress, and a nil one, does
// nothing, so callers need not check. Its methods may be called from
// several goroutines.
type Progress struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar // terminal mode; nil otherwise
	w   io.Writer                // the terminal, in terminal mode
	log *progressLog             // log mode; nil otherwise
}

// LogInterval is the least time between two lines of Log, so that quick
// runs do not flood their logs. The first line and that of the last step
// are always printed.
const LogInterval = 5 * time.Second

// NewProgress returns a progress report for total steps, labelled desc,
// written to out. A total of zero or less means the total is unknown. It is
// disabled when quiet is true or out is nil; it draws a bar when out is a
// terminal and writes log lines otherwise.
func NewProgress(total int, desc string, quiet bool, out *os.File) *Progress {
	if quiet || out == nil {
		return &Progress{}
	}
	if !term.IsTerminal(int(out.Fd())) {
		return newProgressLog(total, desc, out, time.Now)
	}
	return newProgress(total, desc, out)
}

// progressLog is the state of a Progress in log mode.
type progressLog struct {
	w        io.Writer
	desc     string
	total    int
	done     int // steps done, counting those skipped
	skipped  int // steps done before this run (Skip)
	now      func() time.Time
	start    time.Time
	last     time.Time // of the last line of Log; zero before the first
	finished bool
}

// newProgressLog returns a Progress that writes log lines to w, reading
// the time from now.
func newProgressLog(total int, desc string, w io.Writer, now func() time.Time) *Progress {
	return &Progress{log: &progressLog{w: w, desc: desc, total: total, now: now, start: now()}}
}

// line writes a line stamped with the time t.
func (l *progressLog) line(t time.Time, format string, args ...any) {
	fmt.Fprintf(l.w, "%s %s: %s\n", t.Format("2006-01-02 15:04:05"), l.desc, fmt.Sprintf(format, args...))
}

// status describes done steps at time t: the count, the time elapsed and
// the time left, estimated from the rate since the start of this run.
func (l *progressLog) status(done int, t time.Time) string {
	elapsed := t.Sub(l.start)
	if l.total <= 0 {
		return fmt.Sprintf("%d done, %v elapsed", done, roundDuration(elapsed))
	}
	total := max(l.total, done) // never past 100 %
	s := fmt.Sprintf("%d/%d (%.0f%%), %v elapsed", done, total, 100*float64(done)/float64(total), roundDuration(elapsed))
	if ran := done - l.skipped; ran > 0 && done < total && elapsed > 0 {
		left := time.Duration(float64(elapsed) / float64(ran) * float64(total-done))
		s += fmt.Sprintf(", ETA %v", roundDuration(left))
	}
	return s
}

// roundDuration rounds d for a log line: to the second, or to the
// millisecond below a second.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// Skip counts n steps as done before this run, as when a run resumes: they
// count toward the total but not toward the rate that estimates the time
// left.
func (p *Progress) Skip(n int) {
	if p == nil {
		return
	}
	if p.bar != nil {
		p.Add(n)
		return
	}
	p.withLog(func(l *progressLog) { l.done += n; l.skipped += n })
}

// Log writes a line in log mode: the time, the label, done of the total
// steps, the time elapsed, the estimated time left and msg. Lines closer
// than LogInterval to the previous one are left out, except the first and
// that of the last step. It does nothing on a terminal, where the bar shows
// progress (see Describe).
func (p *Progress) Log(done int, msg string) {
	p.withLog(func(l *progressLog) {
		t := l.now()
		if !l.last.IsZero() && t.Sub(l.last) < LogInterval && (l.total <= 0 || done < l.total) {
			return
		}
		l.last = t
		if msg != "" {
			msg = ": " + msg
		}
		l.line(t, "%s%s", l.status(done, t), msg)
	})
}

// Note writes msg as a line of its own, as where the outputs are at the end
// of a run: in log mode as a log line, on a terminal below the bar (or
// above it while it is drawn).
func (p *Progress) Note(msg string) {
	p.withLog(func(l *progressLog) { l.line(l.now(), "%s", msg) })
	if p == nil || p.bar == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.bar.IsFinished() {
		_ = p.bar.Clear()
	}
	fmt.Fprintln(p.w, msg)
}

// withLog calls f with the log state, unless the Progress is not in log
// mode.
func (p *Progress) withLog(f func(l *progressLog)) {
	if p == nil || p.log == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p.log)
}

// newProgress returns an enabled progress bar drawn on w.
func newProgress(total int, desc string, w io.Writer) *Progress {
	if total <= 0 {
		total = -1
	}
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
	return &Progress{bar: bar, w: w}
}

// do calls f with the bar, unless the bar is disabled or finished: once the
// bar has ended its line it must not be drawn again.
func (p *Progress) do(f func(bar *progressbar.ProgressBar)) {
	if p == nil || p.bar == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.bar.IsFinished() {
		f(p.bar)
	}
}

// Add advances the count by n steps. Reaching the total finishes the bar.
func (p *Progress) Add(n int) {
	p.withLog(func(l *progressLog) { l.done += n })
	p.do(func(bar *progressbar.ProgressBar) { _ = bar.Add(n) })
}

// Describe replaces the bar's label, for example to show the current loss.
// It does nothing in log mode, where Log reports such values.
func (p *Progress) Describe(s string) {
	p.do(func(bar *progressbar.ProgressBar) { bar.Describe(s) })
}

// Finish fills the bar and ends its line, leaving the final count and
// elapsed time on screen; in log mode it writes a line with the final count
// and the time taken. Calling it again does nothing.
func (p *Progress) Finish() {
	p.withLog(func(l *progressLog) {
		if l.finished {
			return
		}
		l.finished = true
		t := l.now()
		if l.total > 0 && l.done < l.total {
			l.line(t, "stopped at %s", l.status(l.done, t))
			return
		}
		l.line(t, "finished %s", l.status(l.done, t))
	})
	p.do(func(bar *progressbar.ProgressBar) { _ = bar.Finish() })
}
