package config

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
)

// PersistIfDirty writes path with encode's output if dirty was set, and sets
// it again when the write fails. A change made while encoding sets dirty anew
// and is written next time; nothing is lost between the two.
func PersistIfDirty(path string, dirty *atomic.Bool, encode func() ([]byte, error)) error {
	if !dirty.Swap(false) {
		return nil
	}
	b, err := encode()
	if err == nil {
		err = WriteFile(path, b)
	}
	if err != nil {
		dirty.Store(true)
		return fmt.Errorf("persist %s: %w", filepath.Base(path), err)
	}
	return nil
}
