package config

// Apache writes config/*.json (topics, offsets, groups, KV config…) with
// fastjson, which leaves integer map keys unquoted ({0:12}). ReadFile takes
// both that and standard JSON; writers produce the fastjson form themselves so
// an Apache broker reads rocketgo's files unchanged.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"
)

// QuoteBareKeys rewrites fastjson's unquoted numeric object keys as JSON strings.
func QuoteBareKeys(b []byte) []byte {
	out := make([]byte, 0, len(b)+64)
	var stack []byte // open brackets
	inString, escaped, expectKey := false, false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString, expectKey = true, false
		case '{', '[':
			stack = append(stack, c)
			expectKey = c == '{'
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1] == '{'
		case ' ', '\t', '\n', '\r':
		default:
			if expectKey && (c == '-' || (c >= '0' && c <= '9')) {
				j := i
				for j < len(b) && (b[j] == '-' || (b[j] >= '0' && b[j] <= '9')) {
					j++
				}
				out = append(out, '"')
				out = append(out, b[i:j]...)
				out = append(out, '"')
				i = j - 1
				expectKey = false
				continue
			}
			expectKey = false
		}
		out = append(out, c)
	}
	return out
}

// WriteFile replaces path with data durably: temp file, fsync, keep the
// previous content as path.bak, rename, fsync the directory.
func WriteFile(path string, data []byte) error { return replaceFile(path, data, true) }

// ReplaceFile is WriteFile without the .bak: for files Apache rewrites
// without keeping the previous content (the broker identity, ACL files).
func ReplaceFile(path string, data []byte) error { return replaceFile(path, data, false) }

func replaceFile(path string, data []byte, keepBak bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	// The file's errors (*os.PathError) name the operation and the path. A
	// temp file that could not be written whole is removed: on a full disk
	// it holds the space the next attempt needs.
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if keepBak {
		if old, err := os.ReadFile(path); err == nil && len(old) > 0 {
			if err := os.WriteFile(path+".bak", old, 0o644); err != nil {
				return fmt.Errorf("write %s.bak: %w", path, err)
			}
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// ReadFile returns the file's content, falling back to path.bak when the
// file is missing or empty, as Apache's ConfigManager does. Both missing: nil, nil.
func ReadFile(path string) ([]byte, error) {
	for _, p := range []string{path, path + ".bak"} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		if len(bytes.TrimSpace(b)) > 0 {
			return QuoteBareKeys(b), nil
		}
	}
	return nil, nil
}

// LoadFile passes the content of path (bare keys quoted) to decode. As
// Apache's ConfigManager.load, a file that is missing, empty or refused by
// decode falls back to path.bak; that fallback is logged. Neither file
// present is not an error: there is nothing to load. decode must not change
// anything before it returns nil.
func LoadFile(path string, log zerolog.Logger, decode func([]byte) error) error {
	var errs []error
	for _, p := range []string{path, path + ".bak"} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("read %s: %w", p, err))
			continue
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if err := decode(QuoteBareKeys(b)); err != nil {
			errs = append(errs, fmt.Errorf("decode %s: %w", p, err))
			continue
		}
		if len(errs) > 0 {
			log.Error().Err(errors.Join(errs...)).Str("file", p).Msg("config file unreadable, loaded its backup")
		}
		return nil
	}
	return errors.Join(errs...)
}
