package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
)

// The abort file exists while a store is open (Apache's "abort"; Apache
// writes it empty). Ours holds the kernel's boot id of the run that made
// it, so that recovery can tell the two kinds of abnormal exit apart:
//
//   - the same boot: the process was killed, the machine was not. Every
//     write the process made to a shared mapping is in the page cache, so
//     a file is as the process last wrote it, flushed or not;
//   - another boot, or no id (Apache's empty file): the machine went down,
//     and only what was flushed is known to be there.
const bootIDPath = "/proc/sys/kernel/random/boot_id"

// readBootID returns this boot's id, "" where the kernel gives none.
func readBootID() string {
	b, err := os.ReadFile(bootIDPath)
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
}

// writeAbort makes the abort file holding bootID, synced with its
// directory before the store takes writes.
func writeAbort(path, bootID string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(bootID)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// readAbort reports whether the abort file is there (the last run did
// not shut down) and whether it names bootID (the last run ended on this
// boot). An abort file that cannot be read counts as another boot's.
func readAbort(path, bootID string) (aborted, sameBoot bool) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, false
	}
	if err != nil {
		return true, false
	}
	id := string(bytes.TrimSpace(b))
	return true, bootID != "" && id == bootID
}
