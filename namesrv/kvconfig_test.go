package namesrv

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestKVPersistLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "namesrv", "kvConfig.json")
	kv := NewKV(path)
	if err := kv.Load(); err != nil {
		t.Fatalf("load missing file: %v", err)
	}
	kv.Put(NamespaceOrderTopicConfig, "T", "broker-a:4")
	kv.Put("ns", "k", "v")
	kv.Put("ns", "gone", "x")
	kv.Delete("ns", "gone")
	if err := kv.Persist(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"configTable":{"ORDER_TOPIC_CONFIG":{"T":"broker-a:4"},"ns":{"k":"v"}}}`
	if string(b) != want {
		t.Fatalf("file %s, want %s", b, want)
	}

	kv2 := NewKV(path)
	if err := kv2.Load(); err != nil {
		t.Fatal(err)
	}
	if v, err := kv2.Value("ns", "k"); err != nil || v != "v" {
		t.Fatalf("value %q %v", v, err)
	}
	if _, err := kv2.Value("ns", "gone"); !errors.Is(err, ErrKVNotFound) {
		t.Fatalf("deleted key: %v", err)
	}
	if got, err := kv2.AppendNamespace(nil, NamespaceOrderTopicConfig); err != nil || string(got) != `{"table":{"T":"broker-a:4"}}` {
		t.Fatalf("namespace %s %v", got, err)
	}
	if _, err := kv2.AppendNamespace(nil, "none"); !errors.Is(err, ErrKVNotFound) {
		t.Fatalf("missing namespace: %v", err)
	}
}

func TestKVLoadApacheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kvConfig.json")
	// Apache leaves only the .bak when it dies between its two renames.
	if err := os.WriteFile(path+".bak", []byte(`{"configTable":{"ORDER_TOPIC_CONFIG":{"T":"a:1;b:2"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	kv := NewKV(path)
	if err := kv.Load(); err != nil {
		t.Fatal(err)
	}
	if v, _ := kv.Value(NamespaceOrderTopicConfig, "T"); v != "a:1;b:2" {
		t.Fatalf("value %q", v)
	}
	if err := os.WriteFile(path, []byte(`{"configTable":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := NewKV(path).Load(); err == nil {
		t.Fatal("corrupt file loaded")
	}
}
