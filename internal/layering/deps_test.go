package layering

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/rocketgo/rocketgo/"

// TestServersLinkOnlyWhatTheyUse: the proxy, the controller and the name
// server never open a store: none links the broker (or its tables), the
// store, HA, the broker's request handlers or its controller-mode client;
// what they share with the broker lives in message, remoting, auth and acl.
func TestServersLinkOnlyWhatTheyUse(t *testing.T) {
	checkLinks(t, []string{"cmd/mqproxy", "cmd/mqcontroller", "cmd/mqnamesrv"},
		[]string{"broker/...", "store/...", "ha/...", "processor/...", "replicas/..."})
}

// TestMetricsReadsWhatItIsHanded: the metrics endpoint reads the tables,
// the store and the counters it is handed (metrics.Source), not the
// broker's services: it links neither the broker package nor anything
// that serves requests or replicates.
func TestMetricsReadsWhatItIsHanded(t *testing.T) {
	checkLinks(t, []string{"metrics"}, []string{"broker", "processor/...", "ha/...", "replicas/...", "proxy/..."})
}

// TestServicesStandAlone: a broker service in its own package is built
// from the store, the tables and the small interfaces it declares; it links
// neither the broker that wires it, nor a front end, nor replication.
func TestServicesStandAlone(t *testing.T) {
	checkLinks(t, []string{"broker/admin", "broker/clients", "broker/pop", "broker/pull", "broker/send", "broker/timer", "broker/tx"},
		[]string{"broker", "processor/...", "proxy/...", "ha/...", "replicas/..."})
	// broker/role is replication and controller mode: it links ha and
	// replicas, as the broker did for it, and nothing else the others may
	// not; nor another service, whose state it reaches only through the
	// interfaces of role.Deps (the timer's progress, the broker's special
	// services).
	checkLinks(t, []string{"broker/role"},
		[]string{"broker", "processor/...", "proxy/...", "broker/admin", "broker/clients", "broker/pop", "broker/pull",
			"broker/send", "broker/timer", "broker/tx"})
}

// checkLinks fails for each package of pkgs that links one of forbidden:
// a package path, or "p/..." for p and every package below it.
func checkLinks(t *testing.T, pkgs, forbidden []string) {
	t.Helper()
	goCmd, err := exec.LookPath("go") // go test puts its own toolchain first in PATH
	if err != nil {
		t.Fatalf("no go command to list the servers' packages: %v", err)
	}
	for _, cmd := range pkgs {
		out, err := exec.Command(goCmd, "list", "-deps", module+cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", cmd, err, out)
		}
		var linked []string
		for _, p := range strings.Fields(string(out)) {
			if rel, ok := strings.CutPrefix(p, module); ok {
				linked = append(linked, rel)
			}
		}
		if !strings.Contains(" "+strings.Join(linked, " ")+" ", " "+cmd+" ") {
			t.Fatalf("go list -deps %s did not list the command itself: the check would prove nothing", cmd)
		}
		for _, rel := range linked {
			for _, no := range forbidden {
				tree, below := strings.CutSuffix(no, "/...")
				if rel == tree || (below && strings.HasPrefix(rel, tree+"/")) {
					t.Errorf("%s links %s (all it links of rocketgo: %v)", cmd, rel, linked)
				}
			}
		}
	}
}

// TestOneJSONLibrary: the servers and tools read and write JSON with one
// library (json-iterator, each package's json variable), so a body or a
// file is never encoded two ways. Tests may use encoding/json to check
// what the library wrote.
func TestOneJSONLibrary(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to list the packages: %v", err)
	}
	out, err := exec.Command(goCmd, "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var listed, jsoniter int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		listed++
		for _, imp := range f[1:] {
			switch imp {
			case "encoding/json":
				t.Errorf("%s imports encoding/json", f[0])
			case "github.com/json-iterator/go":
				jsoniter++
			}
		}
	}
	if listed < 20 || jsoniter < 10 {
		t.Fatalf("go list named %d packages, %d importing json-iterator: the check would prove nothing", listed, jsoniter)
	}
}
