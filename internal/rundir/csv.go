package rundir

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CSV is the codec of one CSV file of a run directory: its name, its header
// and the conversion of one record T to and from the header's fields. Every
// writer and reader of the file goes through it (vegeta's lib/results.go
// shape: one record type, its encoder and decoder side by side).
//
// The data contract of every CSV file: one header row, then one row per
// record; times are unix nanoseconds; an empty cell of a number is 0.
type CSV[T any] struct {
	// Name is the file's path relative to the run directory.
	Name   string
	Header []string
	// Gzip: the file is gzip-compressed (sync-flushed, so a cut file reads
	// up to its last flush).
	Gzip bool
	// Optional names columns added after files were written without them:
	// a file whose header lacks one still reads, the column as empty (0).
	Optional []string

	encode func(r *T, f []string)
	decode func(r *T, f *fields)
}

// Path is the file's path inside run directory d.
func (c *CSV[T]) Path(d *Dir) string { return d.Join(c.Name) }

func (c *CSV[T]) base() string { return filepath.Base(c.Name) }

// Encoder writes records of one CSV file.
type Encoder[T any] struct {
	c   *CSV[T]
	w   *csv.Writer
	rec []string
}

// NewEncoder returns an encoder writing to w, header first.
func (c *CSV[T]) NewEncoder(w io.Writer) *Encoder[T] {
	e := c.NewAppendEncoder(w)
	_ = e.w.Write(c.Header) // an error sticks in the csv.Writer; Flush returns it
	return e
}

// NewAppendEncoder returns an encoder that writes no header: for appending
// to a file that has one.
func (c *CSV[T]) NewAppendEncoder(w io.Writer) *Encoder[T] {
	return &Encoder[T]{c: c, w: csv.NewWriter(w), rec: make([]string, len(c.Header))}
}

// Encode writes one record (buffered until Flush).
func (e *Encoder[T]) Encode(r *T) error {
	clear(e.rec)
	e.c.encode(r, e.rec)
	if err := e.w.Write(e.rec); err != nil {
		return fmt.Errorf("write %s: %w", e.c.base(), err)
	}
	return nil
}

// Flush pushes buffered records to the underlying writer.
func (e *Encoder[T]) Flush() error {
	e.w.Flush()
	if err := e.w.Error(); err != nil {
		return fmt.Errorf("write %s: %w", e.c.base(), err)
	}
	return nil
}

// Decoder reads records of one CSV file. Columns are found by header name
// (every column of the codec must be there; extra ones are ignored). A last
// line cut mid-write (an interrupted run) ends the file: Decode returns
// io.EOF and Truncated reports it; a short or broken line anywhere else is an
// error naming file:line.
type Decoder[T any] struct {
	c      *CSV[T]
	r      *recordReader
	name   string
	f      fields
	header bool
	cols   int // columns of the file's header

	// one record of look-ahead, to tell a cut last line from a broken one
	next     [][]byte // valid until the read after the next (recordReader)
	nextLine int
	nextErr  error
	primed   bool

	// Truncated is set when the last line was cut and skipped.
	Truncated bool
}

// NewDecoder returns a decoder reading from r. name is the file name used
// in errors ("" for the codec's).
func (c *CSV[T]) NewDecoder(r io.Reader, name string) *Decoder[T] {
	if name == "" {
		name = c.base()
	}
	// Fields are read as bytes and become strings only when a record keeps
	// them (fields.Str), or interned when they repeat (fields.Sym): no
	// string per line.
	return &Decoder[T]{c: c, r: newRecordReader(r), name: name}
}

func (d *Decoder[T]) readHeader() error {
	d.header = true
	rec, _, err := d.r.read()
	if err == io.EOF {
		return fmt.Errorf("%s: empty file (no header)", d.name)
	}
	if err != nil {
		return fmt.Errorf("%s: header: %w", d.name, err)
	}
	got := make([]string, len(rec))
	for i, h := range rec {
		got[i] = string(h)
	}
	d.cols = len(got)
	pos := map[string]int{}
	for i, h := range got {
		pos[h] = i
	}
	d.f.idx = make([]int, len(d.c.Header))
	var missing []string
	for i, h := range d.c.Header {
		p, ok := pos[h]
		if !ok {
			if slices.Contains(d.c.Optional, h) {
				p = -1 // read as an empty cell
			} else {
				missing = append(missing, h)
			}
		}
		d.f.idx[i] = p
	}
	if missing != nil {
		return fmt.Errorf("%s:1: header %q lacks column(s) %s", d.name, strings.Join(got, ","), strings.Join(missing, ", "))
	}
	d.f.header = d.c.Header
	return nil
}

func (d *Decoder[T]) advance() {
	d.next, d.nextLine, d.nextErr = d.r.read()
}

// Decode reads the next record into r; io.EOF at the end of the file.
func (d *Decoder[T]) Decode(r *T) error {
	if !d.header {
		if err := d.readHeader(); err != nil {
			return err
		}
	}
	if !d.primed {
		d.primed = true
		d.advance()
	}
	rec, line, err := d.next, d.nextLine, d.nextErr
	if err == io.EOF {
		return io.EOF
	}
	d.advance()
	last := d.nextErr == io.EOF
	if err != nil {
		if last && cutRecord(err) {
			d.Truncated = true // e.g. a quoted field cut in the middle
			return io.EOF
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			// A cut gzip stream: the reader cannot go on, whatever follows.
			d.Truncated, d.nextErr = true, io.EOF
			return io.EOF
		}
		return fmt.Errorf("%s: %w", d.name, err)
	}
	if len(rec) != d.cols {
		if last {
			d.Truncated = true
			return io.EOF
		}
		return fmt.Errorf("%s:%d: %d fields, want %d", d.name, line, len(rec), d.cols)
	}
	var zero T
	*r = zero
	d.f.rec, d.f.err = rec, nil
	d.c.decode(r, &d.f)
	if d.f.err != nil {
		return fmt.Errorf("%s:%d: %w", d.name, line, d.f.err)
	}
	return nil
}

// fields is one record being decoded: typed access to its cells by the
// codec's column number, keeping the first conversion error (with the
// column's name).
type fields struct {
	header []string
	idx    []int
	rec    [][]byte
	err    error
	// syms interns the values of Sym columns (node names, kinds, states),
	// up to maxSyms of them.
	syms map[string]string
}

// maxSyms bounds a decoder's interned values: a Sym column that turns out
// not to repeat costs a string per row, not an ever-growing table.
const maxSyms = 4096

// cell is column i's bytes; an optional column the file lacks is empty.
func (f *fields) cell(i int) []byte {
	if f.idx[i] < 0 {
		return nil
	}
	return f.rec[f.idx[i]]
}

// Str returns column i as a new string (one allocation unless empty).
func (f *fields) Str(i int) string { return string(f.cell(i)) }

// Sym returns column i as Str does, interned: for columns whose values
// repeat row after row (node names, kinds, states), every row gets the
// same string and no allocation once the value was seen. Not for ids.
func (f *fields) Sym(i int) string {
	b := f.cell(i)
	if len(b) == 0 {
		return ""
	}
	if s, ok := f.syms[string(b)]; ok { // no allocation for the lookup
		return s
	}
	s := string(b)
	if f.syms == nil {
		f.syms = map[string]string{}
	}
	if len(f.syms) < maxSyms {
		f.syms[s] = s
	}
	return s
}

// num is column i for parsing: converted on the stack (the parsers do not
// keep it), so a number costs no allocation.
func (f *fields) num(i int) []byte { return f.cell(i) }

// Int64 parses column i; "" is 0.
func (f *fields) Int64(i int) int64 {
	b := f.num(i)
	if len(b) == 0 || f.err != nil {
		return 0
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		f.err = fmt.Errorf("%s: %q is not an integer", f.header[i], b)
	}
	return v
}

// Uint64 parses column i; "" is 0.
func (f *fields) Uint64(i int) uint64 {
	b := f.num(i)
	if len(b) == 0 || f.err != nil {
		return 0
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		f.err = fmt.Errorf("%s: %q is not an unsigned integer", f.header[i], b)
	}
	return v
}

// Uint32 parses column i; "" is 0.
func (f *fields) Uint32(i int) uint32 {
	b := f.num(i)
	if len(b) == 0 || f.err != nil {
		return 0
	}
	v, err := strconv.ParseUint(string(b), 10, 32)
	if err != nil {
		f.err = fmt.Errorf("%s: %q is not a 32-bit unsigned integer", f.header[i], b)
	}
	return uint32(v)
}

// Int parses column i; "" is 0.
func (f *fields) Int(i int) int { return int(f.Int64(i)) }

// Float parses column i; "" is 0. ok is false for "".
func (f *fields) Float(i int) (v float64, ok bool) {
	b := f.num(i)
	if len(b) == 0 || f.err != nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		f.err = fmt.Errorf("%s: %q is not a number", f.header[i], b)
	}
	return v, true
}

// Fail records a semantic error of column i (the first one wins).
func (f *fields) Fail(i int, format string, a ...any) {
	if f.err == nil {
		f.err = fmt.Errorf("%s: %s", f.header[i], fmt.Sprintf(format, a...))
	}
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

func f64(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// ReadFile reads every record of the file at path. truncated reports a cut
// last line (skipped). The rows read before an error are returned with it.
func (c *CSV[T]) ReadFile(path string) (rows []T, truncated bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	return c.read(f, path, nil)
}

// ReadFileFilter is ReadFile keeping only the records keep accepts.
func (c *CSV[T]) ReadFileFilter(path string, keep func(*T) bool) (rows []T, truncated bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	return c.read(f, path, keep)
}

func (c *CSV[T]) read(f *os.File, path string, keep func(*T) bool) (rows []T, truncated bool, err error) {
	var r io.Reader = f // the decoder buffers
	if c.Gzip {
		r = bufio.NewReaderSize(f, 1<<16)
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		r = gz
	}
	d := c.NewDecoder(r, filepath.Base(path))
	var size int64 // of a plain file read whole: sizes rows once a few lines are read
	if fi, err := f.Stat(); err == nil && !c.Gzip && keep == nil {
		size = fi.Size()
	}
	for n := 0; ; n++ {
		if n == 256 && size > 0 {
			// A million-row file would otherwise grow rows by doubling,
			// copying it some twenty times: estimate the count from the
			// bytes per line so far, with a margin.
			if used := d.r.offset; used > 0 {
				rows = slices.Grow(rows, int(float64(size)/float64(used)*float64(n)*1.05)-len(rows))
			}
		}
		var rec T
		err := d.Decode(&rec)
		if err == io.EOF {
			return rows, d.Truncated, nil
		}
		if err != nil {
			return rows, false, err
		}
		if keep == nil || keep(&rec) {
			rows = append(rows, rec)
		}
	}
}

// WriteFile writes every record to path atomically (temp file + rename), so
// a reader never sees half of it.
func (c *CSV[T]) WriteFile(path string, rows []T) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	var w io.Writer = bw
	var gz *gzip.Writer
	if c.Gzip {
		gz = gzip.NewWriter(bw)
		w = gz
	}
	e := c.NewEncoder(w)
	for i := range rows {
		if err := e.Encode(&rows[i]); err != nil {
			f.Close()
			return err
		}
	}
	err = e.Flush()
	if gz != nil && err == nil {
		err = gz.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// Writer appends records to a file as they happen. Records are buffered
// and reach the file on Flush (and, after StartFlushing, at least every
// interval), so an interrupted run leaves a readable file up to its last
// flush. Safe for concurrent use.
type Writer[T any] struct {
	c    *CSV[T]
	mu   sync.Mutex
	f    *os.File
	bw   *bufio.Writer
	gz   *gzip.Writer
	enc  *Encoder[T]
	err  error
	stop chan struct{}
	done chan struct{}
}

// Create creates (or truncates) the file at path and writes the header.
func (c *CSV[T]) Create(path string) (*Writer[T], error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Base(path), err)
	}
	return c.newWriter(f, true), nil
}

// Append opens the file at path for appending, creating it with its header
// when it is new or empty.
func (c *CSV[T]) Append(path string) (*Writer[T], error) {
	if c.Gzip {
		return nil, fmt.Errorf("append %s: gzip files are created whole", filepath.Base(path))
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Base(path), err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open %s: %w", filepath.Base(path), err)
	}
	return c.newWriter(f, st.Size() == 0), nil
}

func (c *CSV[T]) newWriter(f *os.File, header bool) *Writer[T] {
	w := &Writer[T]{c: c, f: f, bw: bufio.NewWriterSize(f, 1<<16)}
	var out io.Writer = w.bw
	if c.Gzip {
		// BestSpeed: CSV compresses ~10x even so, and CPU is the scarce thing.
		w.gz, _ = gzip.NewWriterLevel(w.bw, gzip.BestSpeed)
		out = w.gz
	}
	if header {
		w.enc = c.NewEncoder(out)
	} else {
		w.enc = c.NewAppendEncoder(out)
	}
	return w
}

// StartFlushing flushes the file every interval until Close.
func (w *Writer[T]) StartFlushing(interval time.Duration) {
	w.stop, w.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(w.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = w.Flush()
			case <-w.stop:
				return
			}
		}
	}()
}

// Write appends one record. The first write error sticks: every later call
// returns it.
func (w *Writer[T]) Write(r *T) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = w.enc.Encode(r)
	}
	return w.err
}

// Flush pushes every record written so far to the file.
func (w *Writer[T]) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer[T]) flushLocked() error {
	if w.err != nil {
		return w.err
	}
	w.err = w.enc.Flush()
	if w.err == nil && w.gz != nil {
		if err := w.gz.Flush(); err != nil {
			w.err = fmt.Errorf("write %s: %w", w.c.base(), err)
		}
	}
	if w.err == nil {
		if err := w.bw.Flush(); err != nil {
			w.err = fmt.Errorf("write %s: %w", w.c.base(), err)
		}
	}
	return w.err
}

// Close flushes and closes the file.
func (w *Writer[T]) Close() error {
	if w.stop != nil {
		close(w.stop)
		<-w.done
		w.stop = nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.flushLocked()
	if w.gz != nil && w.err == nil {
		if err := w.gz.Close(); err != nil {
			w.err = fmt.Errorf("close %s: %w", w.c.base(), err)
		}
		if err := w.bw.Flush(); err != nil && w.err == nil {
			w.err = fmt.Errorf("close %s: %w", w.c.base(), err)
		}
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("close %s: %w", w.c.base(), err)
	}
	return w.err
}
