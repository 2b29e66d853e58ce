package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// dirNames returns the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFile(t *testing.T) {
	errWrite := errors.New("write failed")
	tests := []struct {
		name    string
		old     string // "" for no existing file
		write   func(io.Writer) error
		wantErr error
		want    string // the file's content afterwards, "" for none
	}{
		{
			name:  "new file",
			write: func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err },
			want:  "new\n",
		},
		{
			name:  "replace",
			old:   "old\n",
			write: func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err },
			want:  "new\n",
		},
		{
			name:    "failing writer keeps old file",
			old:     "old\n",
			write:   func(w io.Writer) error { io.WriteString(w, "partial"); return errWrite },
			wantErr: errWrite,
			want:    "old\n",
		},
		{
			name:    "failing writer creates nothing",
			write:   func(w io.Writer) error { return errWrite },
			wantErr: errWrite,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.txt")
			if tt.old != "" {
				if err := os.WriteFile(path, []byte(tt.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := WriteFile(path, tt.write)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("WriteFile error = %v, want %v", err, tt.wantErr)
			}
			var wantNames []string
			if tt.want != "" {
				wantNames = []string{"f.txt"}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tt.want {
					t.Errorf("content = %q, want %q", got, tt.want)
				}
				info, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if tt.wantErr == nil && info.Mode().Perm() != 0o644 {
					t.Errorf("mode = %v, want 0644", info.Mode().Perm())
				}
			}
			if names := dirNames(t, dir); !reflect.DeepEqual(names, wantNames) {
				t.Errorf("directory holds %q, want %q", names, wantNames)
			}
		})
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "f.txt")
	err := WriteFile(path, func(io.Writer) error { return nil })
	if err == nil {
		t.Fatal("WriteFile into a missing directory succeeded")
	}
	// one line naming the directory, not the temporary file
	if msg := err.Error(); !strings.Contains(msg, "the directory "+filepath.Dir(path)+" does not exist") || strings.Contains(msg, ".tmp") {
		t.Errorf("error %q: want it to name the missing directory", msg)
	}
}

func TestWriteJSON(t *testing.T) {
	type config struct {
		Name  string            `json:"name"`
		Steps int               `json:"steps"`
		Flags map[string]string `json:"flags"`
	}
	tests := []struct {
		name string
		v    config
		want string
	}{
		{
			name: "config",
			v:    config{Name: "a<b>&c", Steps: 3, Flags: map[string]string{"lr": "0.1"}},
			want: "{\n  \"name\": \"a<b>&c\",\n  \"steps\": 3,\n  \"flags\": {\n    \"lr\": \"0.1\"\n  }\n}\n",
		},
		{
			name: "empty",
			v:    config{},
			want: "{\n  \"name\": \"\",\n  \"steps\": 0,\n  \"flags\": null\n}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := writeAndRead(t, "c.json", tt.want, func(path string) error { return WriteJSON(path, tt.v) })
			var back config
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tt.v) {
				t.Errorf("round trip = %+v, want %+v", back, tt.v)
			}
		})
	}
}

func TestWriteJSONErrorKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(path, math.NaN()); err == nil {
		t.Fatal("WriteJSON(NaN) succeeded")
	}
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Errorf("file = %q, want the old content", data)
	}
	if names := dirNames(t, dir); len(names) != 1 {
		t.Errorf("directory holds %q, want only c.json", names)
	}
}

func TestWriteCSV(t *testing.T) {
	tests := []struct {
		name   string
		header []string
		rows   [][]string
		want   string
	}{
		{
			name:   "floats",
			header: []string{"step", "loss"},
			rows: [][]string{
				{"1", FormatFloat(0.1)},
				{"2", FormatFloat(1e-7)},
			},
			want: "step,loss\n1,0.1\n2,1e-07\n",
		},
		{
			name:   "quoting",
			header: []string{"name", "note"},
			rows:   [][]string{{"a,b", `say "hi"`}},
			want:   "name,note\n\"a,b\",\"say \"\"hi\"\"\"\n",
		},
		{
			name:   "header only",
			header: []string{"x"},
			want:   "x\n",
		},
		{
			name: "no header",
			rows: [][]string{{"1", "2"}, {"3"}},
			want: "1,2\n3\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := writeAndRead(t, "t.csv", tt.want, func(path string) error { return WriteCSV(path, tt.header, tt.rows) })
			r := csv.NewReader(bytes.NewReader(data))
			r.FieldsPerRecord = -1
			got, err := r.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			var want [][]string
			if tt.header != nil {
				want = append(want, tt.header)
			}
			want = append(want, tt.rows...)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip = %q, want %q", got, want)
			}
		})
	}
}

func TestWriteCSVRowLength(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.csv")
	err := WriteCSV(path, []string{"a", "b"}, [][]string{{"1", "2"}, {"3"}})
	want := "writing " + path + ": row 2 has 1 fields, header has 2"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("directory holds %q, want nothing", names)
	}
}

func TestFormatFloat(t *testing.T) {
	tests := []struct {
		x    float64
		want string
	}{
		{0, "0"},
		{1, "1"},
		{-2.5, "-2.5"},
		{0.1, "0.1"},
		{1.0 / 3, "0.3333333333333333"},
		{1e-7, "1e-07"},
		{1e21, "1e+21"},
		{123456789, "1.23456789e+08"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{math.SmallestNonzeroFloat64, "5e-324"},
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
		{math.NaN(), "NaN"},
	}
	for _, tt := range tests {
		got := FormatFloat(tt.x)
		if got != tt.want {
			t.Errorf("FormatFloat(%v) = %q, want %q", tt.x, got, tt.want)
		}
		back, err := strconv.ParseFloat(got, 64)
		if err != nil || !(back == tt.x || math.IsNaN(back) && math.IsNaN(tt.x)) {
			t.Errorf("ParseFloat(%q) = %v, %v; want %v", got, back, err, tt.x)
		}
	}
}

func TestVersionNamesTheGoVersion(t *testing.T) {
	v := Version()
	if g, _ := v["go"].(string); !strings.HasPrefix(g, "go") {
		t.Errorf("Version() = %v, want the Go version under \"go\"", v)
	}
}

// writeAndRead writes a file named name in a new directory with write and
// returns its content, failing the test unless it is want.
func writeAndRead(t *testing.T, name, want string, write func(path string) error) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := write(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != want {
		t.Errorf("file = %q, want %q", data, want)
	}
	return data
}
