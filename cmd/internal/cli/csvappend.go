package cli

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// CSVAppender writes a CSV file a row at a time, for outputs that grow
// while a program runs (a run's metrics, one row per evaluation), at a cost
// linear in the file's size where rewriting it with WriteCSV after every row
// would be quadratic.
//
// Each row is written whole, by one write, as soon as it is appended, and a
// row whose write fails is cut off again, so the file always ends with a
// complete row: a program stopped by an error or a signal leaves a valid
// CSV file of the rows so far. Unlike WriteFile, the file is not atomic:
// it is created empty, with its header, by CreateCSV; and it is synced to
// disk by Sync and Close.
type CSVAppender struct {
	path   string
	f      *os.File
	w      io.Writer // f (a test interposes on it)
	size   int64     // bytes of complete rows written
	fields int       // fields of the header and of every row
	rows   int       // rows appended, the header not counted
	buf    bytes.Buffer
	cw     *csv.Writer // formats a row into buf
}

// CreateCSV creates path, or truncates it, writes the header and returns a
// CSVAppender to append rows to it. The header must have at least one
// field; the file's mode is 0644, as WriteFile's.
func CreateCSV(path string, header []string) (*CSVAppender, error) {
	if len(header) == 0 {
		return nil, fmt.Errorf("writing %s: a CSV header needs at least one field", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	a := &CSVAppender{path: path, f: f, w: f, fields: len(header)}
	a.cw = csv.NewWriter(&a.buf)
	if err = f.Chmod(0o644); err == nil {
		err = a.write(header)
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return a, nil
}

// Append writes row to the end of the file, complete, before it returns.
// The row must have as many fields as the header. Use FormatFloat for
// numeric fields. After an error the file still holds the header and the
// rows appended before, and Append may be called again.
func (a *CSVAppender) Append(row []string) error {
	switch {
	case a.f == nil:
		return fmt.Errorf("writing %s: append after Close", a.path)
	case len(row) != a.fields:
		return fmt.Errorf("writing %s: row %d has %d fields, header has %d", a.path, a.rows+1, len(row), a.fields)
	}
	if err := a.write(row); err != nil {
		return fmt.Errorf("writing %s: %w", a.path, err)
	}
	a.rows++
	return nil
}

// write formats a record and writes it with one call, cutting the file back
// to its complete rows if the write fails.
func (a *CSVAppender) write(record []string) error {
	a.buf.Reset()
	if err := a.cw.Write(record); err != nil {
		return err
	}
	a.cw.Flush()
	if err := a.cw.Error(); err != nil {
		return err
	}
	n, err := a.w.Write(a.buf.Bytes())
	if err == nil && n < a.buf.Len() {
		err = io.ErrShortWrite
	}
	if err != nil {
		if n > 0 {
			if terr := a.f.Truncate(a.size); terr != nil {
				return errors.Join(err, terr)
			}
		}
		return err
	}
	a.size += int64(n)
	return nil
}

// Sync commits the rows appended so far to disk, as a checkpoint that
// counts them needs before it is written.
func (a *CSVAppender) Sync() error {
	if a.f == nil {
		return fmt.Errorf("writing %s: sync after Close", a.path)
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", a.path, err)
	}
	return nil
}

// Rows returns the number of rows appended, the header not counted.
func (a *CSVAppender) Rows() int { return a.rows }

// Close syncs the file to disk and closes it. Calling it again does
// nothing and returns nil.
func (a *CSVAppender) Close() error {
	if a.f == nil {
		return nil
	}
	f := a.f
	a.f = nil
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", a.path, err)
	}
	return nil
}

// AppendCSV opens path, a CSV file of complete rows as CreateCSV and Append
// write it, to append more rows to it, as a resumed run does to its
// metrics: the file's header must be header, and every row must have as
// many fields. Rows counts the rows already there.
func AppendCSV(path string, header []string) (*CSVAppender, error) {
	if len(header) == 0 {
		return nil, fmt.Errorf("writing %s: a CSV header needs at least one field", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("appending to %s: %w", path, err)
	}
	fail := func(err error) (*CSVAppender, error) {
		f.Close()
		return nil, fmt.Errorf("appending to %s: %w", path, err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return fail(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		return fail(errors.New("the file does not end with a complete row"))
	}
	records, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return fail(err)
	}
	if len(records) == 0 || !slices.Equal(records[0], header) {
		return fail(fmt.Errorf("its header is not %q", header))
	}
	a := &CSVAppender{path: path, f: f, w: f, fields: len(header), size: int64(len(b)), rows: len(records) - 1}
	a.cw = csv.NewWriter(&a.buf)
	return a, nil
}
