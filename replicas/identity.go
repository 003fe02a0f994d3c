package replicas

// Apache's BrokerMetadata/TempBrokerMetadata (store/ha/autoswitch): one
// line without terminator, '#'-separated, written after deleting the old
// file (no .bak):
//
//	brokerIdentity       <cluster>#<brokerName>#<brokerId>
//	brokerIdentity-temp  <cluster>#<brokerName>#<brokerId>#<addr>;<millis>
//
// The temp file records an id the controller offered (1012) before it was
// applied (1013): a broker that dies in between applies the same id and
// check code again, which the controller accepts as the same broker.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/config"
)

// File names under the store root (storePathBrokerIdentity and its temp).
const (
	FileIdentity     = "brokerIdentity"
	FileIdentityTemp = "brokerIdentity-temp"
)

// ErrIdentity is wrapped by refusals of an identity file's content.
var ErrIdentity = errors.New("bad broker identity file")

// Identity is the content of brokerIdentity, plus the check code in the
// temp file.
type Identity struct {
	Cluster, BrokerName string
	BrokerID            int64
	CheckCode           string // temp file only
}

func (id Identity) encode(temp bool) string {
	s := id.Cluster + "#" + id.BrokerName + "#" + strconv.FormatInt(id.BrokerID, 10)
	if temp {
		s += "#" + id.CheckCode
	}
	return s
}

// parseIdentity decodes a file; Apache splits on '#' and reads fields by
// position, so extra fields are ignored, missing ones fail.
func parseIdentity(s string, temp bool) (Identity, error) {
	f := strings.Split(s, "#")
	need := 3
	if temp {
		need = 4
	}
	if len(f) < need {
		return Identity{}, fmt.Errorf("%d fields, want %d: %w", len(f), need, ErrIdentity)
	}
	id, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return Identity{}, fmt.Errorf("broker id %q: %w", f[2], ErrIdentity)
	}
	out := Identity{Cluster: f[0], BrokerName: f[1], BrokerID: id}
	if temp {
		out.CheckCode = f[3]
	}
	if out.Cluster == "" || out.BrokerName == "" || (temp && out.CheckCode == "") {
		return Identity{}, fmt.Errorf("empty field in %q: %w", s, ErrIdentity)
	}
	return out, nil
}

// IdentityFiles reads and writes the two files under a store root.
type IdentityFiles struct{ Root string }

func (f IdentityFiles) path(temp bool) string {
	if temp {
		return filepath.Join(f.Root, FileIdentityTemp)
	}
	return filepath.Join(f.Root, FileIdentity)
}

// Read returns the identity file's content; false when it does not exist.
func (f IdentityFiles) Read() (Identity, bool, error) { return f.read(false) }

// ReadTemp returns the temp file's content; false when it does not exist.
func (f IdentityFiles) ReadTemp() (Identity, bool, error) { return f.read(true) }

func (f IdentityFiles) read(temp bool) (Identity, bool, error) {
	p := f.path(temp)
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return Identity{}, false, nil
	}
	if err != nil {
		return Identity{}, false, fmt.Errorf("read %s: %w", p, err)
	}
	id, err := parseIdentity(string(b), temp)
	if err != nil {
		return Identity{}, false, fmt.Errorf("%s: %w", p, err)
	}
	return id, true, nil
}

// Write replaces the identity file.
func (f IdentityFiles) Write(id Identity) error { return f.write(id, false) }

// WriteTemp replaces the temp file.
func (f IdentityFiles) WriteTemp(id Identity) error { return f.write(id, true) }

func (f IdentityFiles) write(id Identity, temp bool) error {
	p := f.path(temp)
	// A crash leaves the old file or the new one, never a half-written id.
	if err := config.ReplaceFile(p, []byte(id.encode(temp))); err != nil {
		return fmt.Errorf("write broker identity: %w", err)
	}
	return nil
}

// RemoveTemp deletes the temp file (done once the id is applied, or when
// the controller refused it).
func (f IdentityFiles) RemoveTemp() error {
	if err := os.Remove(f.path(true)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove %s: %w", f.path(true), err)
	}
	return nil
}
