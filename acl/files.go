package acl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rs/zerolog"
)

// WatchInterval is how often Files looks for changed files: Apache's
// AclFileWatchService polls every 5 s.
const WatchInterval = 5 * time.Second

// Files loads the ACL files of a broker home as PlainPermissionManager
// does: ${home}/conf/plain_acl.yml, and every .yml/.yaml under
// ${home}/conf/acl (recursively, but tools.yml). It reloads them all
// when any changes, appears or disappears; a set that fails to load
// leaves the rules in force.
type Files struct {
	home string
	log  zerolog.Logger

	rules    atomic.Pointer[Rules]
	version  atomic.Pointer[remoting.DataVersion]            // the default file's dataVersion
	versions atomic.Pointer[map[string]remoting.DataVersion] // every loaded file's

	// mu serialises loads and the admin codes' edits: an edit reads the
	// rules, writes a file and loads it again as one step.
	mu   sync.Mutex
	seen string // fingerprint of the files last loaded
}

// NewFiles loads home's ACL files. An unreadable or invalid file is an
// error, as it stops Apache's broker; no files at all (or no home) is a
// broker that refuses every request not from a white address, as Apache.
func NewFiles(home string, log zerolog.Logger) (*Files, error) {
	f := &Files{home: home, log: log.With().Str("component", "acl").Logger()}
	if home == "" {
		f.log.Warn().Msg("aclEnable without rocketmqHome (ROCKETMQ_HOME): no accounts, every request refused")
	}
	r, fp, err := f.load()
	if err != nil {
		return nil, err
	}
	f.rules.Store(r)
	f.seen = fp
	f.log.Info().Str("home", home).Int("accounts", r.Accounts()).Int("globalWhiteRemoteAddresses", len(r.global)).Msg("acl loaded")
	return f, nil
}

// Rules is the ACL in force.
func (f *Files) Rules() *Rules { return f.rules.Load() }

// DefaultFile is ${home}/conf/plain_acl.yml.
func (f *Files) DefaultFile() string { return filepath.Join(f.home, "conf", "plain_acl.yml") }

// Run polls the files every interval until ctx ends.
func (f *Files) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.Reload()
		}
	}
}

// Reload loads the files again if any changed since the last load; it is
// Run's step, exported for tests.
func (f *Files) Reload() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reloadLocked()
}

func (f *Files) reloadLocked() {
	paths := f.paths()
	fp := fingerprint(paths)
	if fp == f.seen {
		return
	}
	r, fp, err := f.load()
	if err != nil {
		f.log.Error().Err(err).Msg("acl files changed but do not load: the previous rules stay in force")
		f.seen = fp
		return
	}
	f.rules.Store(r)
	f.seen = fp
	f.log.Info().Int("accounts", r.Accounts()).Int("globalWhiteRemoteAddresses", len(r.global)).Msg("acl reloaded")
}

// paths lists the files to load, in Apache's order: conf/acl's, then the
// default file.
func (f *Files) paths() []string {
	if f.home == "" {
		return nil
	}
	var out []string
	dir := filepath.Join(f.home, "conf", "acl")
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // a missing or unreadable dir is no files, as Apache's listFiles
		}
		n := d.Name()
		if !d.IsDir() && n != "tools.yml" && (strings.HasSuffix(n, ".yml") || strings.HasSuffix(n, ".yaml")) {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	if _, err := os.Stat(f.DefaultFile()); err == nil {
		out = append(out, f.DefaultFile())
	}
	return out
}

// fingerprint names the files with their sizes and modification times.
func fingerprint(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			fmt.Fprintf(&b, "%s:gone;", p)
			continue
		}
		fmt.Fprintf(&b, "%s:%d:%d;", p, st.Size(), st.ModTime().UnixNano())
	}
	return b.String()
}

// load reads and merges every file.
func (f *Files) load() (*Rules, string, error) {
	paths := f.paths()
	fp := fingerprint(paths)
	var files []*PlainFile
	// Apache: a new DataVersion (now, counter 0) when the file has none.
	ver := remoting.DataVersion{Timestamp: time.Now().UnixMilli()}
	vers := make(map[string]remoting.DataVersion, len(paths))
	for _, p := range paths {
		data, err := readBounded(p)
		if err != nil {
			return nil, fp, err
		}
		pf, err := ParsePlainFile(data)
		if errors.Is(err, ErrEmpty) {
			f.log.Warn().Str("file", p).Msg("no data in acl file")
			continue
		}
		if err != nil {
			return nil, fp, fmt.Errorf("load %s: %w", p, err)
		}
		for _, a := range pf.Accounts {
			a.file = p
		}
		v := pf.Version
		if v.Counter == 0 && v.Timestamp == 0 {
			v = ver
		}
		vers[p] = v
		if p == f.DefaultFile() {
			ver = v
		}
		files = append(files, pf)
	}
	f.version.Store(&ver)
	f.versions.Store(&vers)
	r, dup := Merge(files)
	for _, ak := range dup {
		f.log.Warn().Str("accessKey", ak).Msg("accessKey repeated in several acl files: the first is used")
	}
	return r, fp, nil
}

func readBounded(p string) ([]byte, error) {
	fh, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("open acl file: %w", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxPlainFile+1))
	if err != nil {
		return nil, fmt.Errorf("read acl file %s: %w", p, err)
	}
	return data, nil
}
