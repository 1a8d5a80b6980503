package rundir

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
)

// recordReader reads CSV records as encoding/csv's Reader does with
// FieldsPerRecord = -1 (RFC 4180: "" inside quotes, a quoted field may span
// lines, \r\n read as \n, empty lines skipped, a bare " in an unquoted field
// or text after a closing quote is a *csv.ParseError), but hands out the
// fields as byte slices into its own buffers instead of one new string per
// record: the decoder converts only what a record keeps, and interns what
// repeats. The fields of a record stay valid until the read after the next
// one (two buffers, for the decoder's one record of look-ahead).
type recordReader struct {
	r      *bufio.Reader
	line   int   // lines read so far
	offset int64 // bytes read so far

	slot   int
	buf    [2][]byte   // field bytes of the last two records
	ends   [2][]int    // end of each field in buf
	fields [2][][]byte // the records handed out
	// long holds a line longer than the bufio buffer.
	long []byte
}

func newRecordReader(r io.Reader) *recordReader {
	return &recordReader{r: bufio.NewReaderSize(r, 1<<16)}
}

// readLine is csv.Reader.readLine: the next line with its newline (none at
// the end of the input), \r\n turned into \n. Valid until the next call.
func (r *recordReader) readLine() ([]byte, error) {
	line, err := r.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = r.r.ReadSlice('\n')
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	r.offset += int64(len(line))
	if len(line) > 0 && err == io.EOF {
		err = nil
		if line[len(line)-1] == '\r' { // a trailing \r at the end of the input goes
			line = line[:len(line)-1]
		}
	}
	r.line++
	if n := len(line); n >= 2 && line[n-2] == '\r' && line[n-1] == '\n' {
		line[n-2] = '\n'
		line = line[:n-1]
	}
	return line, err
}

func lengthNL(b []byte) int {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return 1
	}
	return 0
}

// read returns the next record and the line it starts on; io.EOF at the
// end. Like csv.Reader.Read, a read error after part of a record (a cut gzip
// stream) comes with that record.
func (r *recordReader) read() (fields [][]byte, startLine int, err error) {
	var line []byte
	var errRead error
	for errRead == nil {
		line, errRead = r.readLine()
		if errRead == nil && len(line) == lengthNL(line) {
			line = nil
			continue // an empty line
		}
		break
	}
	if errRead == io.EOF {
		return nil, 0, errRead
	}
	r.slot ^= 1
	buf, ends := r.buf[r.slot][:0], r.ends[r.slot][:0]
	startLine = r.line
	col := 1 // 1-based byte column of line[0] in its line
	parseErr := func(c int, e error) error {
		return &csv.ParseError{StartLine: startLine, Line: r.line, Column: c, Err: e}
	}
parse:
	for {
		if len(line) == 0 || line[0] != '"' {
			i := bytes.IndexByte(line, ',')
			field := line
			if i >= 0 {
				field = field[:i]
			} else {
				field = field[:len(field)-lengthNL(field)]
			}
			if j := bytes.IndexByte(field, '"'); j >= 0 {
				err = parseErr(col+j, csv.ErrBareQuote)
				break parse
			}
			buf = append(buf, field...)
			ends = append(ends, len(buf))
			if i >= 0 {
				line = line[i+1:]
				col += i + 1
				continue parse
			}
			break parse
		}
		// A quoted field.
		line = line[1:]
		col++
		for {
			i := bytes.IndexByte(line, '"')
			switch {
			case i >= 0:
				buf = append(buf, line[:i]...)
				line = line[i+1:]
				col += i + 1
				switch {
				case len(line) > 0 && line[0] == '"': // "" is a quote
					buf = append(buf, '"')
					line = line[1:]
					col++
				case len(line) > 0 && line[0] == ',':
					line = line[1:]
					col++
					ends = append(ends, len(buf))
					continue parse
				case lengthNL(line) == len(line): // the end of the record
					ends = append(ends, len(buf))
					break parse
				default:
					err = parseErr(col, csv.ErrQuote)
					break parse
				}
			case len(line) > 0: // the field goes on on the next line
				buf = append(buf, line...)
				if errRead != nil {
					break parse
				}
				line, errRead = r.readLine()
				col = 1
				if errRead == io.EOF {
					errRead = nil
				}
			default: // the input ended inside the quotes
				if errRead == nil {
					err = parseErr(col, csv.ErrQuote)
					break parse
				}
				ends = append(ends, len(buf))
				break parse
			}
		}
	}
	if err == nil {
		err = errRead
	}
	r.buf[r.slot], r.ends[r.slot] = buf, ends
	fields = r.fields[r.slot][:0]
	start := 0
	for _, e := range ends {
		fields = append(fields, buf[start:e:e])
		start = e
	}
	r.fields[r.slot] = fields
	return fields, startLine, err
}

// cutRecord says whether err is what a record cut mid-write gives: a quote
// left open, or a compressed stream that ended early (see Decoder.Decode).
func cutRecord(err error) bool {
	var pe *csv.ParseError
	return errors.As(err, &pe) || errors.Is(err, io.ErrUnexpectedEOF)
}
