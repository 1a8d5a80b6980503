package rundir

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// readAllStd is encoding/csv's reading of data (FieldsPerRecord -1), record
// by record with each record's start line, up to the first error.
func readAllStd(data string) (recs [][]string, lines []int, err error) {
	r := csv.NewReader(strings.NewReader(data))
	r.FieldsPerRecord = -1
	for {
		rec, err := r.Read()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return recs, lines, err
		}
		l, _ := r.FieldPos(0)
		recs, lines = append(recs, rec), append(lines, l)
	}
}

func readAllOurs(data string) (recs [][]string, lines []int, offset int64, err error) {
	r := newRecordReader(strings.NewReader(data))
	for {
		fields, line, err := r.read()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return recs, lines, r.offset, err
		}
		rec := make([]string, len(fields))
		for i, f := range fields {
			rec[i] = string(f)
		}
		recs, lines = append(recs, rec), append(lines, line)
	}
}

// sameAsStd: our reader gives encoding/csv's records, start lines and
// error kinds, so existing run directories read as they did.
func sameAsStd(t *testing.T, data string) {
	t.Helper()
	want, wantLines, wantErr := readAllStd(data)
	got, gotLines, _, gotErr := readAllOurs(data)
	var wpe, gpe *csv.ParseError
	if !equalRecs(got, want) || !equalInts(gotLines, wantLines) || (wantErr == nil) != (gotErr == nil) ||
		errors.As(wantErr, &wpe) != errors.As(gotErr, &gpe) || wpe != nil && gpe != nil && (wpe.Err != gpe.Err || wpe.StartLine != gpe.StartLine) {
		t.Errorf("input %q:\nours %q lines %v err %v\nstd  %q lines %v err %v", data, got, gotLines, gotErr, want, wantLines, wantErr)
	}
}

func equalRecs(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "\x00") != strings.Join(b[i], "\x00") || len(a[i]) != len(b[i]) {
			return false
		}
	}
	return true
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRecordReaderCases: the corners of RFC 4180 and of cut files.
func TestRecordReaderCases(t *testing.T) {
	for _, in := range []string{
		"", "\n", "a", "a\n", "a,b\nc,d\n", "a,b\r\nc,d\r\n", "a,b\r", "\n\na,b\n\n\nc\n",
		`"a,b",c` + "\n", `"a""b",c` + "\n", `"multi` + "\n" + `line",x` + "\n" + "y,z\n",
		`"cr` + "\r\n" + `lf",x` + "\n", `"a"b,c` + "\n", `a"b,c` + "\n", `"open,x` + "\n", `"open`,
		`a,"cut`, "a,b\n" + `c,"cut` + "\n" + "more", ",,\n,\n", `""` + "\n", `"",""` + "\n", `x,""` + "\n",
		"a,b\nc,d", "a,\"b\"\"\n\"\"\",c\n", "é,ü\n", "a,b \n", " a, b\n",
	} {
		sameAsStd(t, in)
	}
}

// TestRecordReaderRandom: whatever csv.Writer writes (quotes, commas,
// newlines, \r in fields) and any cut of it read the same as encoding/csv.
func TestRecordReaderRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "7", ",", `"`, "\n", "\r", "\r\n", " ", "é", ""}
	for range 2000 {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		for range rng.IntN(5) + 1 {
			rec := make([]string, rng.IntN(4)+1)
			for i := range rec {
				var s strings.Builder
				for range rng.IntN(6) {
					s.WriteString(alphabet[rng.IntN(len(alphabet))])
				}
				rec[i] = s.String()
			}
			w.Write(rec)
		}
		w.Flush()
		data := b.String()
		sameAsStd(t, data)
		sameAsStd(t, data[:rng.IntN(len(data)+1)]) // a cut file
		if t.Failed() {
			return
		}
	}
}

// TestRecordReaderLongLine: a line longer than the read buffer.
func TestRecordReaderLongLine(t *testing.T) {
	long := strings.Repeat("x", 200_000)
	sameAsStd(t, "a,"+long+"\n"+`"`+long+"\n"+long+`",b`+"\nc\n")
}

// TestDecodeAllocs: a trace row costs no allocation but its message id:
// node names, kinds and reasons are interned, numbers parsed in place (the
// decoder allocated one string per line before).
func TestDecodeAllocs(t *testing.T) {
	for _, tc := range []struct {
		ev   GossipEvent
		want float64
	}{
		{GossipEvent{Node: "host1", Kind: GossipDropRPC, Peer: "host2", Reason: "queue full"}, 0},
		{GossipEvent{Node: "host1", Kind: GossipDeliver, MsgID: "m000123", Peer: "host2", Size: 1000}, 1},
	} {
		var b bytes.Buffer
		e := GossipTraceCSV.NewEncoder(&b)
		for i := range 1000 {
			ev := tc.ev
			ev.TimeNs = int64(i) * 1e6
			e.Encode(&ev)
		}
		e.Flush()
		d := GossipTraceCSV.NewDecoder(bytes.NewReader(b.Bytes()), "")
		var ev GossipEvent
		for range 10 { // the header, the buffers and the interned names
			if err := d.Decode(&ev); err != nil {
				t.Fatal(err)
			}
		}
		allocs := testing.AllocsPerRun(500, func() {
			if err := d.Decode(&ev); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > tc.want {
			t.Errorf("%s: %.1f allocations per trace row, want %.0f", tc.ev.Kind, allocs, tc.want)
		}
		ev.TimeNs = 0
		if ev != tc.ev {
			t.Errorf("decoded %+v, want %+v", ev, tc.ev)
		}
	}
}
