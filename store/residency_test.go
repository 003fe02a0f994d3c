package store

import (
	"testing"
	"time"
)

// A range found in memory is trusted for residentHintTTL, whole pages
// only, and forgotten after it or when the pages are paged out.
func TestResidentHint(t *testing.T) {
	var mf mappedFile
	if _, _, ok := mf.residentHint(); ok {
		t.Fatal("a new file has a hint")
	}
	mf.setResidentHint(3*pageSize, 3*pageSize) // empty: nothing learnt
	if _, _, ok := mf.residentHint(); ok {
		t.Fatal("an empty range was kept")
	}
	mf.setResidentHint(2*pageSize, 70*pageSize+100) // the partial last page is not claimed
	lo, hi, ok := mf.residentHint()
	if !ok || lo != 2*pageSize || hi != 70*pageSize {
		t.Fatalf("hint [%d, %d) %t", lo, hi, ok)
	}
	// A fresh hint is widened by a range it touches, and keeps its age; a
	// range apart from it replaces it.
	mf.setResidentHint(70*pageSize, 90*pageSize)
	mf.setResidentHint(1*pageSize, 3*pageSize)
	if lo, hi, _ := mf.residentHint(); lo != pageSize || hi != 90*pageSize {
		t.Fatalf("widened hint [%d, %d), want [%d, %d)", lo, hi, pageSize, 90*pageSize)
	}
	mf.setResidentHint(200*pageSize, 210*pageSize)
	if lo, hi, _ := mf.residentHint(); lo != 200*pageSize || hi != 210*pageSize {
		t.Fatalf("hint [%d, %d) after a range apart from it", lo, hi)
	}
	old := time.Now().Add(-residentHintTTL - time.Millisecond).UnixNano()
	mf.residentAt.Store(old)
	if _, _, ok := mf.residentHint(); ok {
		t.Fatal("a stale hint is trusted")
	}
	mf.setResidentHint(205*pageSize, 220*pageSize) // a stale hint is not widened
	if lo, _, ok := mf.residentHint(); !ok || lo != 205*pageSize {
		t.Fatalf("after a stale hint: lo %d ok %t, want a new range from %d", lo, ok, 205*pageSize)
	}
}

// PageOut forgets the hints of the files it pages out, so the next reader
// checks again and finds the pages gone.
func TestPageOutForgetsHint(t *testing.T) {
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	for i := range 64 {
		if _, err := s.Put(testMsg("R", 0, i)); err != nil {
			t.Fatal(err)
		}
	}
	s.cl.q.mu.RLock()
	mf := s.cl.q.files[0]
	s.cl.q.mu.RUnlock()
	mf.setResidentHint(0, pageSize)
	if _, err := s.PageOut(0, s.MaxPhyOffset()); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := mf.residentHint(); ok {
		t.Fatal("hint kept across PageOut")
	}
}
