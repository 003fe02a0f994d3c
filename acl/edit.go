package acl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/remoting"
)

// Editing plain_acl.yml for the admin codes, as PlainPermissionManager does
// it, with two differences: the file is edited as a YAML tree, so comments
// and keys rocketgo does not read survive (Apache rewrites the whole file
// from its model); and it is replaced atomically (temporary file, fsync,
// rename) after the result is checked to load, so a request never leaves
// a file the broker cannot read.

// editFile applies fn to the YAML mapping of path (empty when the file is
// empty or absent), advances its dataVersion and replaces the file.
func editFile(path string, fn func(m *yaml.Node) error) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read acl file: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("acl: parse yaml %s: %w", path, err)
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("acl: %s is not a YAML mapping", path)
	}
	if err := fn(m); err != nil {
		return err
	}
	nextVersion(m)
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return fmt.Errorf("acl: encode %s: %w", path, err)
	}
	if _, err := ParsePlainFile(out); err != nil && !errors.Is(err, ErrEmpty) {
		return err
	}
	if err := config.ReplaceFile(path, out); err != nil {
		return fmt.Errorf("acl: %w", err)
	}
	return nil
}

// nextVersion is updateAclConfigFileVersion: dataVersion's first element
// gets counter+1 and the time now.
func nextVersion(m *yaml.Node) {
	dv := fileVersion(m)
	dv.Counter++
	dv.Timestamp = time.Now().UnixMilli()
	el := &yaml.Node{Kind: yaml.MappingNode}
	setKey(el, "counter", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(dv.Counter, 10)})
	setKey(el, "timestamp", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(dv.Timestamp, 10)})
	setKey(m, "dataVersion", &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{el}})
}

// fileVersion reads dataVersion's first element (zero when absent).
func fileVersion(m *yaml.Node) (dv remoting.DataVersion) {
	seq := key(m, "dataVersion")
	if seq == nil || seq.Kind != yaml.SequenceNode || len(seq.Content) == 0 {
		return dv
	}
	el := seq.Content[0]
	if c := key(el, "counter"); c != nil {
		dv.Counter, _ = strconv.ParseInt(c.Value, 10, 64) // a malformed counter restarts at 0, as a missing one
	}
	if t := key(el, "timestamp"); t != nil {
		dv.Timestamp, _ = strconv.ParseInt(t.Value, 10, 64)
	}
	return dv
}

// key returns the value of k in mapping m, or nil.
func key(m *yaml.Node, k string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == k {
			return m.Content[i+1]
		}
	}
	return nil
}

// setKey sets k in mapping m, appending it when absent.
func setKey(m *yaml.Node, k string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == k {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalarNode(k), v)
}

func scalarNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func seqNode(items []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode}
	for _, s := range items {
		n.Content = append(n.Content, scalarNode(s))
	}
	return n
}

// isACLFile says whether p may be written by UPDATE_GLOBAL_WHITE_ADDRS_CONFIG:
// an existing .yml or .yaml file under home (Apache checks a string prefix
// only and lets any extension but .yaml through; rocketgo is stricter).
func isACLFile(home, p string) bool {
	if home == "" || !(strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) {
		return false
	}
	rel, err := filepath.Rel(home, filepath.Clean(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
