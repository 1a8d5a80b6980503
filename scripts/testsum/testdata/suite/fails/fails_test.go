package fails

import "testing"

func TestFails(t *testing.T) { t.Error("fails says why") }
