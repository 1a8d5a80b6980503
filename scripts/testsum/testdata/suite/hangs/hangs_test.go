package hangs

import (
	"testing"
	"time"
)

func TestHangs(t *testing.T) {
	t.Log("hangs said this before it hung")
	time.Sleep(time.Minute)
}
