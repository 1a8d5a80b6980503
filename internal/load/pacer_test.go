package load

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

// fakeClock jumps instead of sleeping, so schedules are checked exactly.
type fakeClock struct{ now time.Time }

func (f *fakeClock) Now() time.Time { return f.now }
func (f *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	if t.After(f.now) {
		f.now = t
	}
	return ctx.Err()
}

var epoch = time.Unix(1_700_000_000, 0)

func TestPaceConstantExact(t *testing.T) {
	clk := &fakeClock{now: epoch}
	var sent []time.Time
	n, err := Pace(context.Background(), clk, epoch, Constant{R: 1000}, 10_000, func(i int, due time.Time) {
		if !clk.now.Equal(due) {
			t.Fatalf("tx %d sent at %v, due %v", i, clk.now.Sub(epoch), due.Sub(epoch))
		}
		sent = append(sent, clk.now)
	})
	if err != nil || n != 10_000 || len(sent) != 10_000 {
		t.Fatalf("Pace = %d, %v; sent %d, want exactly 10000", n, err, len(sent))
	}
	for i, s := range sent {
		if want := epoch.Add(time.Duration(i) * time.Millisecond); !s.Equal(want) {
			t.Fatalf("tx %d at %v, want %v", i, s.Sub(epoch), want.Sub(epoch))
		}
	}
}

func TestTicksWithin(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Schedule
		d    time.Duration
		want int
	}{
		{"qa 1000x10s", Constant{R: 1000}, 10 * time.Second, 10_000},
		{"qa 200x90s", Constant{R: 200}, 90 * time.Second, 18_000},
		{"fractional rounds up", Constant{R: 0.5}, 3 * time.Second, 2},
		{"one third", Constant{R: 3}, time.Second / 3, 1},
		{"ramp 0-100 over 10s", Ramp{From: 0, To: 100, D: 10 * time.Second}, 10 * time.Second, 500},
		{"ramp 50-150 over 2s", Ramp{From: 50, To: 150, D: 2 * time.Second}, 2 * time.Second, 200},
		{"ramp then flat", Ramp{From: 0, To: 100, D: 10 * time.Second}, 12 * time.Second, 700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TicksWithin(tc.s, tc.d); got != tc.want {
				t.Fatalf("TicksWithin = %d, want %d", got, tc.want)
			}
			// Cross-check with the offsets themselves.
			n := 0
			for tc.s.Offset(n) < tc.d {
				n++
			}
			if n != tc.want {
				t.Fatalf("offsets below %v: %d, want %d", tc.d, n, tc.want)
			}
		})
	}
}

func TestRampOffsets(t *testing.T) {
	r := Ramp{From: 10, To: 110, D: 10 * time.Second}
	// N(t) = 10t + 5t²: tx i is due at the root of N(t) = i.
	for _, i := range []int{0, 1, 10, 100, 299, 599} {
		t.Run("", func(t *testing.T) {
			ts := r.Offset(i).Seconds()
			if got := 10*ts + 5*ts*ts; math.Abs(got-float64(i)) > 1e-6 {
				t.Fatalf("N(Offset(%d)) = %v", i, got)
			}
		})
	}
	if got := r.Offset(600); got != 10*time.Second {
		t.Fatalf("Offset(600) = %v, want exactly the ramp's end 10s", got)
	}
	if got, want := r.Offset(610), 10*time.Second+secs(10.0/110); got != want {
		t.Fatalf("after the ramp: Offset(610) = %v, want %v", got, want)
	}
	if got := r.Rate(600); got != 110 {
		t.Fatalf("Rate at end = %v", got)
	}
	// From 0: the first intervals are long, and offsets are increasing.
	z := Ramp{From: 0, To: 100, D: 10 * time.Second}
	if got, want := z.Offset(1), secs(math.Sqrt(1.0/5)); got != want {
		t.Fatalf("ramp from 0: Offset(1) = %v, want %v", got, want)
	}
	for i := 1; i < 700; i++ {
		if z.Offset(i) <= z.Offset(i-1) {
			t.Fatalf("offsets not increasing at %d", i)
		}
	}
}

// A sender stalled for 50 ms sends the ticks that fell due meanwhile at once,
// in order, loses none, sends none early, and then resumes the schedule.
func TestPaceCatchUp(t *testing.T) {
	clk := &fakeClock{now: epoch}
	type send struct {
		i       int
		at, due time.Time
	}
	var sends []send
	n, err := Pace(context.Background(), clk, epoch, Constant{R: 1000}, 200, func(i int, due time.Time) {
		sends = append(sends, send{i, clk.now, due})
		if i == 10 {
			clk.now = clk.now.Add(50 * time.Millisecond) // the stall
		}
	})
	if err != nil || n != 200 || len(sends) != 200 {
		t.Fatalf("Pace = %d, %v; %d sends, want 200", n, err, len(sends))
	}
	stallEnd := epoch.Add(60 * time.Millisecond)
	for k, s := range sends {
		switch {
		case s.i != k:
			t.Fatalf("send %d is tx %d: order lost", k, s.i)
		case s.at.Before(s.due):
			t.Fatalf("tx %d sent %v early", s.i, s.due.Sub(s.at))
		case s.i > 10 && s.i <= 60 && !s.at.Equal(stallEnd):
			t.Fatalf("backlog tx %d sent at %v, want at the stall's end %v", s.i, s.at.Sub(epoch), stallEnd.Sub(epoch))
		case (s.i <= 10 || s.i > 60) && !s.at.Equal(s.due):
			t.Fatalf("tx %d sent at %v, want on schedule %v", s.i, s.at.Sub(epoch), s.due.Sub(epoch))
		}
	}
}

func TestPaceCancel(t *testing.T) {
	clk := &fakeClock{now: epoch}
	ctx, cancel := context.WithCancel(context.Background())
	n, err := Pace(ctx, clk, epoch, Constant{R: 100}, 100, func(i int, _ time.Time) {
		if i == 4 {
			cancel()
		}
	})
	if n != 5 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Pace = %d, %v; want 5, canceled", n, err)
	}
}

// The real clock never returns early and is rarely late by more than the
// spin window allows; a loose bound so a busy CI machine does not flake.
func TestRealClockNeverEarly(t *testing.T) {
	var clk realClock
	var late []time.Duration
	for range 200 {
		due := time.Now().Add(700 * time.Microsecond)
		if err := clk.SleepUntil(context.Background(), due); err != nil {
			t.Fatal(err)
		}
		d := time.Since(due)
		if d < 0 {
			t.Fatalf("woke %v early", -d)
		}
		late = append(late, d)
	}
	n := 0
	for _, d := range late {
		if d > 5*time.Millisecond {
			n++
		}
	}
	if n > 10 {
		t.Fatalf("%d of 200 wake-ups more than 5ms late", n)
	}
}

func TestYielder(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	us := time.Microsecond
	for _, c := range []struct {
		name      string
		now, next time.Duration // since the last yield
		want      bool
	}{
		{"too soon after the last yield", yieldEvery - us, yieldEvery + time.Millisecond, false},
		{"due, with slack", yieldEvery, yieldEvery + yieldSlack, true},
		{"due, next tick too close", yieldEvery + time.Millisecond, yieldEvery + time.Millisecond + yieldSlack - us, false},
		{"long overdue, behind schedule", 50 * time.Millisecond, 49 * time.Millisecond, false},
		{"long overdue, slack", 50 * time.Millisecond, 51 * time.Millisecond, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			yielded := false
			y := &yielder{last: t0, yield: func() time.Time { yielded = true; return at(c.now) }}
			y.after(at(c.now), at(c.next))
			if yielded != c.want {
				t.Errorf("yielded = %v, want %v", yielded, c.want)
			}
			if c.want && !y.last.Equal(at(c.now)) {
				t.Errorf("last yield %v not moved to %v", y.last, at(c.now))
			}
		})
	}
}

// PaceAll sends every connection's every tx exactly at its due time, each
// connection in order, all of them in order of due time.
func TestPaceAllExact(t *testing.T) {
	for _, tc := range []struct {
		name  string
		s     Schedule
		ns    []int
		total int
	}{
		{"two equal", Constant{R: 700}, []int{2100, 2100}, 4200},
		{"uneven counts", Constant{R: 100}, []int{5, 0, 300, 1}, 306},
		{"ramp", Ramp{From: 0, To: 100, D: 10 * time.Second}, []int{500, 499}, 999},
		{"none", Constant{R: 10}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{now: epoch}
			next := make([]int, len(tc.ns))
			var last time.Time
			total := 0
			sent, err := PaceAll(context.Background(), clk, epoch, tc.s, tc.ns, func(k, i int, due time.Time) {
				if i != next[k] {
					t.Fatalf("connection %d: tx %d sent, want %d", k, i, next[k])
				}
				next[k]++
				if want := epoch.Add(tc.s.Offset(i)); !due.Equal(want) || !clk.now.Equal(due) {
					t.Fatalf("connection %d tx %d: due %v sent at %v, want both %v", k, i, due.Sub(epoch), clk.now.Sub(epoch), want.Sub(epoch))
				}
				if due.Before(last) {
					t.Fatalf("connection %d tx %d due %v after a tx due %v", k, i, due.Sub(epoch), last.Sub(epoch))
				}
				last = due
				total++
			})
			if err != nil || total != tc.total {
				t.Fatalf("PaceAll = %v, %v; %d sends, want %d", sent, err, total, tc.total)
			}
			for k, n := range tc.ns {
				if sent[k] != n || next[k] != n {
					t.Fatalf("connection %d: sent %d (callback %d), want %d", k, sent[k], next[k], n)
				}
			}
		})
	}
}

// A cancelled PaceAll stops, says where, and counts only what it sent.
func TestPaceAllCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	clk := &fakeClock{now: epoch}
	calls := 0
	sent, err := PaceAll(ctx, clk, epoch, Constant{R: 10}, []int{10, 10}, func(k, i int, _ time.Time) {
		if calls++; calls == 7 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || sent[0]+sent[1] != 7 || sent[0] != 4 || sent[1] != 3 {
		t.Fatalf("PaceAll = %v, %v; want [4 3] and context.Canceled", sent, err)
	}
}
