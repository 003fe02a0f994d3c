package broker

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/namesrv/namesrvtest"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/remoting/remotingtest"
)

// optIn is an operator's configBlackList that leaves only Apache's default
// black list, so that listenPort and brokerPermission are changeable.
func optIn(c *Config) { c.ConfigBlackList = "configBlackList;brokerConfigPath" }

// By default the keys that govern security, where data lives, the
// listeners and whether clients are served are refused as Apache refuses a
// black-listed key, and nothing changes.
func TestUpdateConfigDefaultBlackList(t *testing.T) {
	b, _ := testBroker(t, t.TempDir(), nil)
	for _, key := range []string{"authenticationEnabled=false", "authorizationEnabled=false", "aclEnable=false",
		"authConfigPath=/tmp/x", "authenticationWhitelist=25", "authorizationWhitelist=25", "innerClientAuthenticationCredentials={}",
		"initAuthenticationUser={}", "authenticationProvider=x", "authorizationProvider=x",
		"storePathRootDir=/tmp/x", "storePathCommitLog=/tmp/x", "listenPort=1", "haListenPort=1", "haMasterAddress=6.6.6.6:1",
		"brokerPermission=0", "brokerRole=SLAVE", "bindAddress=0.0.0.0", "configBlackList=", "brokerConfigPath=/tmp/x"} {
		_, err := b.UpdateConfig([]byte(key + "\n"))
		remotingtest.WantRefusal(t, err, remoting.NoPermission, "Can not update config in black list.")
	}
	if got := b.Config(); got.BrokerPermission != 6 || got.Store.StorePathRootDir == "/tmp/x" {
		t.Fatalf("refused updates changed the config: perm %d root %q", got.BrokerPermission, got.Store.StorePathRootDir)
	}
	if ch, err := b.UpdateConfig([]byte("flushConsumerOffsetInterval=6543\n")); err != nil || len(ch.Applied) != 1 {
		t.Fatalf("allowed key: %+v %v", ch, err)
	}
}

// A runtime key is in force at once: the snapshot, and what reads it per use
// (Groups.Get stops creating groups; TBW102 stops lending itself).
func TestUpdateConfigAppliesRuntimeKeys(t *testing.T) {
	b, _ := testBroker(t, t.TempDir(), optIn)
	_, v0 := b.ConfigProperties()
	if _, ok := b.Groups.Get("auto-before"); !ok {
		t.Fatal("autoCreateSubscriptionGroup default: group not created")
	}
	if _, err := b.Topics.AutoCreate("AutoBefore", message.AutoCreateTopicKey, 4); err != nil {
		t.Fatalf("autoCreateTopicEnable default: %v", err)
	}
	ch, err := b.UpdateConfig([]byte("autoCreateSubscriptionGroup=false\nautoCreateTopicEnable = false\nbrokerPermission=4\nnoSuchKey=1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Applied) != 3 || len(ch.Ignored) != 1 || ch.Ignored[0] != "noSuchKey" {
		t.Fatalf("change = %+v", ch)
	}
	c := b.Config()
	if c.AutoCreateSubscriptionGroup || c.AutoCreateTopicEnable || c.BrokerPermission != 4 {
		t.Fatalf("config in force: autoCreateSubscriptionGroup %v autoCreateTopicEnable %v brokerPermission %d",
			c.AutoCreateSubscriptionGroup, c.AutoCreateTopicEnable, c.BrokerPermission)
	}
	if _, ok := b.Groups.Get("auto-after"); ok {
		t.Fatal("group created with autoCreateSubscriptionGroup=false")
	}
	if _, err := b.Topics.AutoCreate("AutoAfter", message.AutoCreateTopicKey, 4); !errors.Is(err, tables.ErrTopicNotExist) {
		t.Fatalf("AutoCreate with autoCreateTopicEnable=false: %v", err)
	}
	body, v1 := b.ConfigProperties()
	if v1.Counter != v0.Counter+1 {
		t.Fatalf("data version %+v -> %+v, want one step", v0, v1)
	}
	for _, line := range []string{"brokerPermission=4", "autoCreateTopicEnable=false", "brokerName=b"} {
		if !strings.Contains("\n"+string(body), "\n"+line+"\n") {
			t.Fatalf("GET_BROKER_CONFIG lacks %q:\n%s", line, body)
		}
	}
}

// A key fixed at start-up is recorded for the next start, not applied.
func TestUpdateConfigRecordsStartupKeys(t *testing.T) {
	b, _ := testBroker(t, t.TempDir(), optIn)
	port := b.Config().ListenPort
	ch, err := b.UpdateConfig([]byte("listenPort=12345\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Recorded) != 1 || ch.Recorded[0] != "listenPort" || len(ch.Applied) != 0 {
		t.Fatalf("change = %+v", ch)
	}
	if got := b.Config().ListenPort; got != port {
		t.Fatalf("listenPort in force %d, want %d until restart", got, port)
	}
	if IsRuntimeKey("listenPort") || !IsRuntimeKey("brokerPermission") {
		t.Fatal("IsRuntimeKey")
	}
}

// Apache's refusals: a black-listed key NO_PERMISSION with its remark (the
// three fixed keys and those configBlackList adds), a bad value
// INVALID_PARAMETER; the update is all or nothing.
func TestUpdateConfigRefusals(t *testing.T) {
	b, _ := testBroker(t, t.TempDir(), func(c *Config) { c.ConfigBlackList = "configBlackList;brokerConfigPath;brokerName" })
	const black = "Can not update config in black list."
	for _, body := range []string{"rocketmqHome=/x\n", "brokerConfigPath=/tmp/x\n", "configBlackList=\n",
		"brokerPermission=2\nbrokerName=other\n"} {
		_, err := b.UpdateConfig([]byte(body))
		remotingtest.WantRefusal(t, err, remoting.NoPermission, black)
		if !errors.Is(err, ErrConfigBlackListed) {
			t.Fatalf("%q: %v does not wrap ErrConfigBlackListed", body, err)
		}
	}
	_, err := b.UpdateConfig([]byte("brokerPermission=2\nlistenPort=abc\n"))
	remotingtest.WantRefusal(t, err, remoting.InvalidParameter, "The value[abc] of config listenPort is invalid.")
	if got := b.Config().BrokerPermission; got != 6 {
		t.Fatalf("brokerPermission %d after refused updates, want 6", got)
	}
	if _, v := b.ConfigProperties(); v.Counter != 1 {
		t.Fatalf("refused updates moved the data version: %+v", v)
	}
	if ch, err := b.UpdateConfig(nil); err != nil || len(ch.Applied)+len(ch.Recorded)+len(ch.Ignored) != 0 {
		t.Fatalf("empty body: %+v %v", ch, err)
	}
}

// The update is written back to the config file, the previous content kept
// as .bak, unknown keys of the file kept; the next start reads the new values.
func TestUpdateConfigWriteBackAndRestart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "broker.conf")
	orig := "# the operator's comment\n\nbrokerName=b\nbrokerIP1=127.0.0.1\nstorePathRootDir=" + filepath.Join(dir, "store") +
		"\nmappedFileSizeCommitLog=1048576\nsomeJavaOnlyKey=kept\n" +
		`initAuthenticationUser={"username":"u","password":"secretP1"}` + "\n"
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func() Config {
		cfg := DefaultConfig()
		if err := LoadConfigFile(path, &cfg, zerolog.Nop()); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := load()
	if cfg.ConfigFile != path || len(cfg.ConfigFileExtras) != 1 || cfg.ConfigFileExtras[0] != [2]string{"someJavaOnlyKey", "kept"} {
		t.Fatalf("loaded ConfigFile %q extras %v", cfg.ConfigFile, cfg.ConfigFileExtras)
	}
	b, stop := testBroker(t, dir, func(c *Config) { *c = cfg; optIn(c) })
	if _, err := b.UpdateConfig([]byte("brokerPermission=4\nlistenPort=12345\nsomeJavaOnlyKey=changed\n")); err != nil {
		t.Fatal(err)
	}
	// GET_BROKER_CONFIG lists no ACL 2.0 key (Apache's AuthConfig is not
	// reported), so never the secret; the file keeps it whole.
	if props, _ := b.ConfigProperties(); strings.Contains(string(props), "initAuthenticationUser") ||
		strings.Contains(string(props), "secretP1") || strings.Contains(string(props), "userCacheMaxNum") {
		t.Fatalf("GET_BROKER_CONFIG shows ACL 2.0 keys:\n%s", props)
	}
	stop() // writes the config file (persistAll), as Shutdown does
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Only the keys updated are rewritten, in place or appended; the
	// comment, the order and the other keys stay as the operator wrote them.
	want := strings.Replace(orig, "someJavaOnlyKey=kept", "someJavaOnlyKey=changed", 1) + "brokerPermission=4\nlistenPort=12345\n"
	if string(got) != want {
		t.Fatalf("config file:\n%s\nwant:\n%s", got, want)
	}
	if bak, err := os.ReadFile(path + ".bak"); err != nil || string(bak) != orig {
		t.Fatalf(".bak = %q, %v; want the original %q", bak, err, orig)
	}
	cfg = load()
	if cfg.BrokerPermission != 4 || cfg.ListenPort != 12345 || cfg.ConfigFileExtras[0][1] != "changed" {
		t.Fatalf("restart reads brokerPermission %d listenPort %d extras %v", cfg.BrokerPermission, cfg.ListenPort, cfg.ConfigFileExtras)
	}
	// A second update keeps the generations before it.
	b, stop = testBroker(t, dir, func(c *Config) { *c = cfg; optIn(c) })
	if _, err := b.UpdateConfig([]byte("brokerPermission=6\n")); err != nil {
		t.Fatal(err)
	}
	stop()
	if bak, err := os.ReadFile(path + ".bak.1"); err != nil || string(bak) != orig {
		t.Fatalf(".bak.1 = %q, %v; want the original", bak, err)
	}
	if bak, err := os.ReadFile(path + ".bak"); err != nil || string(bak) != want {
		t.Fatalf(".bak = %q, %v; want the first update's file", bak, err)
	}
	if got, _ := os.ReadFile(path); string(got) != strings.Replace(want, "brokerPermission=4", "brokerPermission=6", 1) {
		t.Fatalf("second update:\n%s", got)
	}
}

// brokerPermission and namesrvAddr applied at runtime: the registration that
// follows goes to the new name server, whole, with every topic's perm masked
// by the broker's (Apache's registerBrokerAll after an update), under a new
// topic data version; the table itself keeps its perms.
func TestRegistrationFollowsRuntimeConfig(t *testing.T) {
	nsA, addrA := namesrvtest.Start(t)
	nsB, addrB := namesrvtest.Start(t)
	b, _ := runServing(t, addrA, optIn)
	if err := b.Admin.UpdateTopic(tables.TopicConfig{TopicName: "T", ReadQueueNums: 2, WriteQueueNums: 2, Perm: message.PermRead | message.PermWrite}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool {
		regs := nsA.Registrations()
		return len(regs) > 0 && regs[len(regs)-1]["T"].Perm == message.PermRead|message.PermWrite
	})
	registeredA := len(nsA.Registrations())
	v0 := b.Admin.AllTopicConfig().DataVersion
	if _, err := b.UpdateConfig([]byte("brokerPermission=4\nnamesrvAddr=" + addrB + "\n")); err != nil {
		t.Fatal(err)
	}
	if v := b.Admin.AllTopicConfig().DataVersion; v.Counter != v0.Counter+1 {
		t.Fatalf("topic data version %+v -> %+v, want a new one", v0, v)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(nsB.Registrations()) > 0 })
	regs := nsB.Registrations()
	if len(regs) != 1 || len(regs[0]) != len(b.Admin.AllTopicConfig().Topics) || regs[0]["T"].Perm != message.PermRead ||
		regs[0][message.AutoCreateTopicKey].Perm&message.PermWrite != 0 {
		t.Fatalf("name server B: %+v", regs)
	}
	if n := len(nsA.Registrations()); n != registeredA {
		t.Fatalf("name server A got %d registrations after namesrvAddr moved", n-registeredA)
	}
	if tc, _ := b.Admin.TopicConfig("T"); tc.Perm != message.PermRead|message.PermWrite {
		t.Fatalf("the table's perm changed to %d", tc.Perm)
	}
}

// A config file asking for Apache's RocksDB store of half or timer messages
// is refused at load, whatever the case of the value; false, or another
// unknown key, is kept as any unknown key is.
func TestRocksDBStoreKeysRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		line   string
		refuse bool
	}{
		{"transRocksDBEnable=true", true},
		{"timerRocksDBEnable = TRUE ", true},
		{"transRocksDBEnable=false", false},
		{"timerRocksDBEnable=", false},
		{"transRocksDBBatchSize=10", false},
	} {
		path := filepath.Join(dir, "broker.conf")
		if err := os.WriteFile(path, []byte("brokerName=b\n"+tc.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		err := LoadConfigFile(path, &cfg, zerolog.Nop())
		if got := errors.Is(err, ErrRocksDBStore); got != tc.refuse {
			t.Errorf("%q: err %v, want refused %v", tc.line, err, tc.refuse)
		}
		if !tc.refuse && err != nil {
			t.Errorf("%q: %v", tc.line, err)
		}
	}
}

// UPDATE_BROKER_CONFIG refuses to turn a RocksDB store on: written to the
// file, the key would stop the next start.
func TestUpdateConfigRefusesRocksDBStore(t *testing.T) {
	b, _ := testBroker(t, t.TempDir(), optIn)
	_, err := b.UpdateConfig([]byte("transRocksDBEnable=true\n"))
	var r *remoting.Refusal
	if !errors.As(err, &r) || r.Code != remoting.InvalidParameter || !errors.Is(err, ErrRocksDBStore) {
		t.Fatalf("err %v, want INVALID_PARAMETER refusal of ErrRocksDBStore", err)
	}
	if _, err := b.UpdateConfig([]byte("transRocksDBEnable=false\n")); err != nil {
		t.Fatalf("false: %v", err)
	}
}
