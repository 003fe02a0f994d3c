package layering

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/rocketgo/rocketgo/"

// TestServersLinkOnlyWhatTheyUse: the proxy, the controller and the name
// server never open a store: none links the broker, the store, HA or the
// broker's request handlers (what they share lives in message, remoting,
// auth and acl).
func TestServersLinkOnlyWhatTheyUse(t *testing.T) {
	forbidden := []string{"broker", "store", "ha", "ha/autoswitch", "processor", "replicas"}
	for _, cmd := range []string{"cmd/mqproxy", "cmd/mqcontroller", "cmd/mqnamesrv"} {
		out, err := exec.Command("go", "list", "-deps", module+cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", cmd, err, out)
		}
		deps := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			deps[strings.TrimPrefix(p, module)] = true
		}
		if !deps[cmd] {
			t.Fatalf("go list -deps %s did not list the command itself:\n%s", cmd, out)
		}
		for _, p := range forbidden {
			if deps[p] {
				t.Errorf("%s links %s", cmd, p)
			}
		}
	}
}
