package passes

import "testing"

func TestPasses(t *testing.T) { t.Log("passes logs this") }

func TestSkipped(t *testing.T) { t.Skip("skipped says why") }
