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

// Progress is a progress bar with a count, rate and estimated time left. A
// disabled Progress, and a nil one, does nothing, so callers need not check.
// Its methods may be called from several goroutines.
type Progress struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar // nil when disabled
}

// NewProgress returns a progress bar for total steps, labelled desc, drawn
// on out. A total of zero or less means the total is unknown and shows a
// spinner. The bar is disabled when quiet is true or out is not a terminal,
// so logs and redirected output stay clean.
func NewProgress(total int, desc string, quiet bool, out *os.File) *Progress {
	if quiet || out == nil || !term.IsTerminal(int(out.Fd())) {
		return &Progress{}
	}
	return newProgress(total, desc, out)
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
	return &Progress{bar: bar}
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

// Add advances the bar by n steps. Reaching the total finishes the bar.
func (p *Progress) Add(n int) {
	p.do(func(bar *progressbar.ProgressBar) { _ = bar.Add(n) })
}

// Describe replaces the bar's label, for example to show the current loss.
func (p *Progress) Describe(s string) {
	p.do(func(bar *progressbar.ProgressBar) { bar.Describe(s) })
}

// Finish fills the bar and ends its line, leaving the final count and
// elapsed time on screen. Calling it again does nothing.
func (p *Progress) Finish() {
	p.do(func(bar *progressbar.ProgressBar) { _ = bar.Finish() })
}
