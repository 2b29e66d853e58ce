package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// WriteJSON writes v to path as indented JSON with a trailing newline,
// atomically (see WriteFile). HTML characters in strings are not escaped.
func WriteJSON(path string, v any) error {
	return WriteFile(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	})
}

// WriteCSV writes a CSV file to path atomically (see WriteFile): the header,
// unless it is nil, then the rows. Every row must have as many fields as a
// non-nil header. Use FormatFloat for numeric fields.
func WriteCSV(path string, header []string, rows [][]string) error {
	if header != nil {
		for i, row := range rows {
			if len(row) != len(header) {
				return fmt.Errorf("writing %s: row %d has %d fields, header has %d", path, i+1, len(row), len(header))
			}
		}
	}
	return WriteFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if header != nil {
			if err := cw.Write(header); err != nil {
				return err
			}
		}
		if err := cw.WriteAll(rows); err != nil {
			return err
		}
		return cw.Error()
	})
}

// FormatFloat formats x in the shortest form that parses back to exactly x
// (strconv 'g' format, precision -1), as in "0.1", "1e-07", "NaN" or "+Inf".
func FormatFloat(x float64) string {
	return strconv.FormatFloat(x, 'g', -1, 64)
}
