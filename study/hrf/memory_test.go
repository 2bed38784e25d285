package hrf

import "testing"

func TestMapMemory(t *testing.T) {
	e := MapMemory(3, 512, 16, 200)
	if want := 8.0 * 3 * 2 * 512 * (16 + 200); e.Bytes() != want {
		t.Errorf("MapMemory = %v bytes, want %v", e.Bytes(), want)
	}
	if h := MapMemory(11, 1<<24, 1<<24, 1<<20); h.Bytes() < 1<<50 {
		t.Errorf("huge sizes: %v bytes", h.Bytes())
	}
}
