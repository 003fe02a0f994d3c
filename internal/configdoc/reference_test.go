package configdoc

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/controller"
	"github.com/rocketgo/rocketgo/namesrv"
	"github.com/rocketgo/rocketgo/proxy"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md")

const referencePath = "../../docs/configuration.md"

// The committed reference is what the config structs say now.
func TestReference(t *testing.T) {
	// Defaults some servers take from the environment or the home
	// directory are shown as on a machine without them.
	t.Setenv("ROCKETMQ_HOME", "")
	t.Setenv("NAMESRV_ADDR", "")
	home, _ := os.UserHomeDir()
	host, _ := os.Hostname()
	got, err := Render("../..", home, map[string]string{host: "the host name"}, sections())
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(referencePath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go test ./internal/configdoc -run TestReference -update and commit it", filepath.Clean(referencePath))
	}
}

func sections() []Section {
	return []Section{
		{
			Title:    "Broker",
			Intro:    "`mqbroker -c broker.conf`: Java properties, Apache's BrokerConfig, MessageStoreConfig and NettyServerConfig keys. `mqbroker -p` prints the configuration in force.",
			Defaults: broker.DefaultConfig(),
			Tag:      "key",
			Dirs:     []string{"broker", "store", "ha", "ha/autoswitch", "remoting"},
		},
		{
			Title:    "Name server",
			Intro:    "`mqnamesrv -c namesrv.conf`: Java properties, Apache's NamesrvConfig and NettyServerConfig keys.",
			Defaults: namesrv.DefaultConfig(),
			Tag:      "key",
			Dirs:     []string{"namesrv", "remoting"},
		},
		{
			Title:    "Controller",
			Intro:    "`mqcontroller -c controller.conf` (or the controller inside `mqnamesrv` with `enableControllerInNamesrv=true`): Java properties, Apache's ControllerConfig keys.",
			Defaults: controller.DefaultConfig(),
			Tag:      "key",
			Dirs:     []string{"controller", "remoting"},
		},
		{
			Title:    "Proxy",
			Intro:    "`mqproxy -pc rmq-proxy.json` (or `mqbroker --enable-proxy`): JSON, Apache's ProxyConfig keys.",
			Defaults: proxy.DefaultConfig(),
			Tag:      "json",
			Dirs:     []string{"proxy"},
		},
	}
}
