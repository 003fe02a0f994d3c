package processor

import (
	"testing"
	"time"
)

func TestJavaDate(t *testing.T) {
	ms := time.Date(2026, 12, 1, 9, 5, 7, 42e6, time.Local).UnixMilli()
	if got := javaDate(ms); got != "2026-12-01#09:05:07:042" {
		t.Errorf("javaDate = %q", got)
	}
}
