package rundir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// JSONL is the codec of a JSON-lines file of a run directory: one record T
// per line, appended while the run goes on (so a crash can cut the last
// line). Like CSV, every writer and reader of the file goes through it.
type JSONL[T any] struct {
	// Name is the file's path relative to the run directory.
	Name string
	// check validates a decoded record (nil: none); its error names the line.
	check func(r *T) error
}

// Path is the file's path inside run directory d.
func (c *JSONL[T]) Path(d *Dir) string { return d.Join(c.Name) }

func (c *JSONL[T]) base() string { return filepath.Base(c.Name) }

// JSONLEncoder writes records of one JSON-lines file.
type JSONLEncoder[T any] struct {
	c *JSONL[T]
	w io.Writer
}

// NewEncoder returns an encoder writing to w.
func (c *JSONL[T]) NewEncoder(w io.Writer) *JSONLEncoder[T] { return &JSONLEncoder[T]{c: c, w: w} }

// Encode writes r as one line, in a single Write (an unbuffered file gets
// whole lines, or a line cut by a crash).
func (e *JSONLEncoder[T]) Encode(r *T) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode %s: %w", e.c.base(), err)
	}
	if _, err := e.w.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", e.c.base(), err)
	}
	return nil
}

// JSONLDecoder reads records of one JSON-lines file. Blank lines are
// skipped. A last line that does not parse and has no newline after it was
// cut mid-write (an interrupted run): Decode returns io.EOF and Truncated
// reports it. Any other bad line is an error naming file:line.
type JSONLDecoder[T any] struct {
	c    *JSONL[T]
	r    *bufio.Reader
	name string
	line int
	// Truncated is set when the last line was cut and skipped.
	Truncated bool
}

// NewDecoder returns a decoder reading from r. name is the file name used
// in errors ("" for the codec's).
func (c *JSONL[T]) NewDecoder(r io.Reader, name string) *JSONLDecoder[T] {
	if name == "" {
		name = c.base()
	}
	return &JSONLDecoder[T]{c: c, r: bufio.NewReaderSize(r, 1<<16), name: name}
}

// Decode reads the next record into r; io.EOF at the end of the file.
func (d *JSONLDecoder[T]) Decode(r *T) error {
	for {
		line, err := d.r.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return fmt.Errorf("read %s: %w", d.name, err)
		}
		last := err == io.EOF // no newline after it
		if len(line) == 0 && last {
			return io.EOF
		}
		d.line++
		if len(bytes.TrimSpace(line)) == 0 {
			if last {
				return io.EOF
			}
			continue
		}
		var zero T
		*r = zero
		if err := json.Unmarshal(line, r); err != nil {
			var syn *json.SyntaxError
			if last && (errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF)) {
				d.Truncated = true
				return io.EOF
			}
			return fmt.Errorf("%s:%d: %w", d.name, d.line, err)
		}
		if d.c.check != nil {
			if err := d.c.check(r); err != nil {
				return fmt.Errorf("%s:%d: %w", d.name, d.line, err)
			}
		}
		return nil
	}
}

// ReadFile reads every record of the file at path. truncated reports a cut
// last line (skipped). The records read before an error are returned with it.
func (c *JSONL[T]) ReadFile(path string) (rows []T, truncated bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	name := filepath.Base(path)
	if strings.HasSuffix(path, string(filepath.Separator)+c.Name) {
		name = c.Name // e.g. linkem/lateness.jsonl
	}
	return c.Read(f, name)
}

// Read reads every record from r (name as in NewDecoder).
func (c *JSONL[T]) Read(r io.Reader, name string) (rows []T, truncated bool, err error) {
	d := c.NewDecoder(r, name)
	for {
		var rec T
		err := d.Decode(&rec)
		if err == io.EOF {
			return rows, d.Truncated, nil
		}
		if err != nil {
			return rows, false, err
		}
		rows = append(rows, rec)
	}
}

// JSONLWriter appends records to a file as they happen, each in one write
// (no buffering: a record is in the file when Write returns). Safe for
// concurrent use.
type JSONLWriter[T any] struct {
	mu  sync.Mutex
	f   *os.File
	enc *JSONLEncoder[T]
}

// Append opens the file at path for appending, creating it when new.
func (c *JSONL[T]) Append(path string) (*JSONLWriter[T], error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", c.base(), err)
	}
	return &JSONLWriter[T]{f: f, enc: c.NewEncoder(f)}, nil
}

// Write appends one record.
func (w *JSONLWriter[T]) Write(r *T) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.enc.Encode(r)
}

// Close closes the file.
func (w *JSONLWriter[T]) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", w.enc.c.base(), err)
	}
	return nil
}
