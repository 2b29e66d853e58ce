package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProgressDisabled(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		name string
		p    *Progress
	}{
		{"nil", nil},
		{"zero", &Progress{}},
		{"quiet", NewProgress(10, "x", true, os.Stderr)},
		{"quiet to a file", NewProgress(10, "x", true, f)},
		{"nil file", NewProgress(10, "x", false, nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.p != nil && (tt.p.bar != nil || tt.p.log != nil) {
				t.Fatal("progress is enabled")
			}
			tt.p.Skip(2)
			tt.p.Add(3)
			tt.p.Describe("loss 0.5")
			tt.p.Log(5, "loss 0.5")
			tt.p.Finish()
			tt.p.Finish()
			tt.p.Note("outputs in x")
		})
	}
	if info, err := f.Stat(); err != nil || info.Size() != 0 {
		t.Errorf("disabled progress wrote to its file (size %d, err %v)", info.Size(), err)
	}
}

// TestProgressLogsWhenNotATerminal: a run whose standard error is a file
// (nohup, a batch job) gets log lines, not silence and not a bar.
func TestProgressLogsWhenNotATerminal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	p := NewProgress(10, "sample", false, f)
	if p.bar != nil || p.log == nil {
		t.Fatal("want log mode on a file")
	}
	p.Add(10)
	p.Log(10, "kl=0.5")
	p.Finish()
	p.Note("outputs in runs/x")
	f.Close()
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], " sample: 10/10 (100%), ") || !strings.HasSuffix(lines[0], ": kl=0.5") || !strings.Contains(lines[1], "sample: finished 10/10 (100%)") ||
		!strings.HasSuffix(lines[2], "sample: outputs in runs/x") {
		t.Errorf("log:\n%s", b)
	}
}

// TestProgressLog checks the log lines against a fake clock: the count,
// the time elapsed, the time left estimated from this run's rate (steps
// skipped on resuming do not count toward it), the throttle and the final
// line.
func TestProgressLog(t *testing.T) {
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	type event struct {
		at   time.Duration // since the start
		kind string        // skip, add, log, finish, note
		n    int
		msg  string
	}
	tests := []struct {
		name   string
		total  int
		events []event
		want   []string
	}{
		{
			name:  "evaluations",
			total: 100,
			events: []event{
				{10 * time.Second, "add", 10, ""},
				{10 * time.Second, "log", 10, "kl=0.5"},
				{12 * time.Second, "add", 10, ""},
				{12 * time.Second, "log", 20, "kl=0.4"}, // within LogInterval: left out
				{40 * time.Second, "add", 20, ""},
				{40 * time.Second, "log", 40, "kl=0.3"},
				{41 * time.Second, "add", 60, ""},
				{41 * time.Second, "log", 100, "kl=0.2"}, // the last step: always
				{41 * time.Second, "finish", 0, ""},
				{42 * time.Second, "note", 0, "outputs in runs/x"},
			},
			want: []string{
				"2024-05-01 12:00:10 run: 10/100 (10%), 10s elapsed, ETA 1m30s: kl=0.5",
				"2024-05-01 12:00:40 run: 40/100 (40%), 40s elapsed, ETA 1m0s: kl=0.3",
				"2024-05-01 12:00:41 run: 100/100 (100%), 41s elapsed: kl=0.2",
				"2024-05-01 12:00:41 run: finished 100/100 (100%), 41s elapsed",
				"2024-05-01 12:00:42 run: outputs in runs/x",
			},
		},
		{
			name:  "resumed and stopped",
			total: 10,
			events: []event{
				{0, "skip", 4, ""},
				{time.Minute, "add", 1, ""},
				{time.Minute, "log", 5, "epoch 5/10"},
				{90 * time.Second, "finish", 0, ""},
				{90 * time.Second, "finish", 0, ""},
			},
			want: []string{
				"2024-05-01 12:01:00 run: 5/10 (50%), 1m0s elapsed, ETA 5m0s: epoch 5/10",
				"2024-05-01 12:01:30 run: stopped at 5/10 (50%), 1m30s elapsed, ETA 7m30s",
			},
		},
		{
			name:  "past the total",
			total: 10,
			events: []event{
				{0, "skip", 12, ""},
				{time.Second, "finish", 0, ""},
			},
			want: []string{
				"2024-05-01 12:00:01 run: finished 12/12 (100%), 1s elapsed",
			},
		},
		{
			name:  "unknown total",
			total: 0,
			events: []event{
				{500 * time.Millisecond, "add", 3, ""},
				{500 * time.Millisecond, "log", 3, ""},
				{time.Second, "finish", 0, ""},
			},
			want: []string{
				"2024-05-01 12:00:00 run: 3 done, 500ms elapsed",
				"2024-05-01 12:00:01 run: finished 3 done, 1s elapsed",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			now := t0
			p := newProgressLog(tt.total, "run", &out, func() time.Time { return now })
			for _, e := range tt.events {
				now = t0.Add(e.at)
				switch e.kind {
				case "skip":
					p.Skip(e.n)
				case "add":
					p.Add(e.n)
				case "log":
					p.Log(e.n, e.msg)
				case "finish":
					p.Finish()
				case "note":
					p.Note(e.msg)
				}
				p.Describe("ignored in log mode")
			}
			got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestProgressEnabled(t *testing.T) {
	for _, total := range []int{5, 0} {
		var out strings.Builder
		p := newProgress(total, "sampling", &out)
		for i := 0; i < 5; i++ {
			p.Add(1)
		}
		p.Describe("loss 0.25")
		p.Finish()
		p.Finish()
		got := out.String()
		if !strings.HasSuffix(got, "\n") || strings.Count(got, "\n") != 1 {
			t.Errorf("total %d: output does not end in exactly one newline: %q", total, got)
		}
		if total > 0 && !strings.Contains(got, "(5/5") {
			t.Errorf("total %d: output has no final count: %q", total, got)
		}
	}
}

// TestProgressNoteOnATerminal: on a terminal a note, such as where the
// outputs are, is a line of its own, before and after the bar ends.
func TestProgressNoteOnATerminal(t *testing.T) {
	var out strings.Builder
	p := newProgress(4, "sampling", &out)
	p.Add(2)
	p.Note("stopped early")
	p.Add(2)
	p.Finish()
	p.Note("outputs in runs/x")
	got := out.String()
	if !strings.HasSuffix(got, "\noutputs in runs/x\n") || !strings.Contains(got, "stopped early\n") {
		t.Errorf("output %q: want the notes on lines of their own", got)
	}
}

func TestProgressConcurrent(t *testing.T) {
	var out strings.Builder
	p := newProgress(100, "x", &out)
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 25; i++ {
				p.Add(1)
				p.Describe("loss")
			}
			done <- true
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	p.Finish()
	if got := out.String(); !strings.Contains(got, "(100/100") {
		t.Errorf("output has no final count 100/100: %q", got)
	}
}
