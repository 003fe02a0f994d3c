package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoBrokerPackage: mqcontroller links neither the broker nor what the
// broker is made of: the controller checks signatures with auth/signature,
// not package auth; a stray import of processor, broker, store or ha
// would pull the broker into it.
func TestLinksNoBrokerPackage(t *testing.T) {
	const module = "github.com/rocketgo/rocketgo/"
	goCmd, err := exec.LookPath("go") // go test puts its own toolchain first in PATH
	if err != nil {
		t.Fatalf("no go command to list the binary's packages: %v", err)
	}
	out, err := exec.Command(goCmd, "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	var linked, forbidden []string
	for _, p := range deps {
		rel, ok := strings.CutPrefix(p, module)
		if !ok {
			continue
		}
		linked = append(linked, rel)
		for _, no := range []string{"broker", "store", "processor", "ha"} {
			if rel == no || strings.HasPrefix(rel, no+"/") {
				forbidden = append(forbidden, rel)
			}
		}
		if rel == "auth" || rel == "acl" { // their interceptors import processor
			forbidden = append(forbidden, rel)
		}
	}
	if !strings.Contains(" "+strings.Join(linked, " ")+" ", " controller ") {
		t.Fatalf("go list found no controller among %v: the check would prove nothing", linked)
	}
	if len(forbidden) > 0 {
		t.Fatalf("mqcontroller links %v (all it links of rocketgo: %v)", forbidden, linked)
	}
}
